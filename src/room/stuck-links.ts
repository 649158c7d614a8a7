// Room links that y-webrtc leaves waiting forever, found so the room can restart them (main
// thread, pure logic; room.ts applies it once a second).
//
// Why: two peers whose `announce` messages cross (they join at the same moment, or both come back
// when the signaling server restarts) each start a connection as the initiator. y-webrtc 10.3
// breaks the tie with a token sent with each offer, but the token exists only once a side has sent
// its own offer; simple-peer makes that offer a few milliseconds after the connection is created.
// An offer that arrives inside that window is accepted into the initiator's peer connection, whose
// own offer then fails ("Called in wrong state: have-remote-offer"); y-webrtc drops that side's
// connection and replaces it with one that receives only the other side's ICE candidates, while
// the other side waits in have-local-offer for an answer that never comes. Neither side announces
// again, so the two never connect (4 of 30 simultaneous joins here; no audio either, since the
// audio mesh negotiates over these links).
//
// A healthy link has the other side's description within one signaling round trip: milliseconds
// on a quiet machine (ICE may then take seconds, which this does not touch), but seconds on a
// saturated one (a first limit of 3 s cut healthy links in the 31-stream bench, whose late
// answers then hit y-webrtc with no link to land on). A link without one after STUCK_AFTER_MS
// is stuck, and destroying it makes y-webrtc announce again. The other side's half is stuck too,
// and must go as well, but not at the same moment, or the two new announces could cross again: the
// side with the larger peer id goes first, the other RETRY_GAP_MS later, by which time the first
// side has no link to it any more and answers its announce with a fresh offer.

/** A link with no remote description this long is stuck (ms). */
export const STUCK_AFTER_MS = 10_000;
/** How much later the side with the smaller peer id restarts its half (ms). */
export const RETRY_GAP_MS = 2000;

/** What this needs of one of y-webrtc's WebrtcConn objects (untyped internals, read only). */
export interface RoomLinkLike {
  readonly connected: boolean;
  readonly closed: boolean;
  /** simple-peer's Peer; `_pc` is its RTCPeerConnection (null once destroyed). */
  readonly peer: { readonly _pc?: { readonly remoteDescription: RTCSessionDescription | null } | null };
}

export class StuckLinks {
  /** When each link was first seen without a remote description. */
  private readonly since = new Map<RoomLinkLike, number>();
  /** Links restarted so far (shown in tests; a healthy room never needs one). */
  restarted = 0;

  /**
   * The links to destroy now. `links` is y-webrtc's map of remote peer id → link; `selfId` is our
   * y-webrtc peer id.
   */
  check<L extends RoomLinkLike>(links: ReadonlyMap<string, L>, selfId: string, nowMs: number): L[] {
    const out: L[] = [];
    const seen = new Set<RoomLinkLike>();
    for (const [remoteId, link] of links) {
      const pc = link.peer._pc;
      if (link.connected || link.closed || !pc || pc.remoteDescription) continue; // no pc: being destroyed
      seen.add(link);
      const first = this.since.get(link) ?? nowMs;
      this.since.set(link, first);
      const after = STUCK_AFTER_MS + (selfId > remoteId ? 0 : RETRY_GAP_MS);
      if (nowMs - first >= after) out.push(link);
    }
    for (const link of this.since.keys()) if (!seen.has(link)) this.since.delete(link);
    for (const link of out) this.since.delete(link);
    this.restarted += out.length;
    return out;
  }
}
