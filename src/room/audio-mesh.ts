// The audio mesh of one room (main thread): one RTCPeerConnection per remote participant,
// negotiated through the room itself. Offers and answers travel in the Yjs awareness states
// (MemberState.audio, a per-addressee SDP mailbox) over the room's peer-to-peer y-webrtc links,
// so they never touch the server and only peers holding the room password can see them. Each
// connection's audio DataChannel goes to the network worker the moment it exists.

import type { NetBridge } from '../engine/net-bridge.ts';
import { AUDIO_CHANNEL_INIT, AUDIO_CHANNEL_LABEL } from '../shared/audio-channel.ts';
import type { AudioSdp, MemberState } from '../shared/signaling-protocol.ts';
import type { Room } from './room.ts';
import type { TrackRegistry } from './track-registry.ts';

/** Publish the SDP once ICE gathering completes (all candidates inside), or after this long. */
const GATHER_TIMEOUT_MS = 4000;
const RETRY_MS = 1500;
const CONNECT_TIMEOUT_MS = 20_000;

export interface RemoteMember {
  /** The peer's room client id, as a string: the worker's peerId. */
  id: string;
  name: string;
  role: MemberState['role'];
  instrument: string;
  /** The peer muted itself. */
  selfMuted: boolean;
  format: MemberState['format'];
  connection: RTCPeerConnectionState;
  /** The audio channel reached the worker and opened. */
  audio: boolean;
}

interface Link {
  pc: RTCPeerConnection;
  gen: number;
  offerer: boolean;
  answered: boolean;
  member: RemoteMember;
}

export class AudioMesh {
  private readonly links = new Map<string, Link>();
  /** Our SDP mailbox, mirrored into our awareness state. */
  private readonly outbox: Record<string, AudioSdp> = {};
  private readonly retry = new Map<string, ReturnType<typeof setTimeout>>();
  /** The offer generation we last answered per peer: a stale offer is never answered twice. */
  private readonly answeredGen = new Map<string, number>();
  private readonly offs: (() => void)[] = [];
  private closed = false;
  onchange: () => void = () => {};

  constructor(
    private readonly room: Room,
    private readonly net: NetBridge,
    private readonly iceServers: RTCIceServer[],
    /** Recording track numbers per participant, kept across their rejoins. */
    private readonly tracks: TrackRegistry,
    /**
     * Whether we may have an audio link with peer `id` now: always, but in a lesson room, where only
     * the teacher and the members the teacher admitted link, and only while we are in too
     * (src/room/lesson.ts). The session calls resync() when the answer changes.
     */
    private readonly allowed: (id: string) => boolean = () => true,
  ) {
    room.provider.awareness.on('change', this.sync);
    this.offs.push(net.on('peer-open', (id) => this.update(id, (m) => (m.audio = true))));
    // Only a channel that died by itself ends the link: 'replaced' and 'removed by page' are our
    // own doing and may arrive after a new link for the same peer exists.
    this.offs.push(net.on('peer-closed', (id, reason) => { if (reason === 'channel closed') this.drop(id, true); }));
    this.sync();
  }

  get selfId(): string {
    return String(this.room.clientId);
  }

  members(): RemoteMember[] {
    return [...this.links.values()].map((l) => l.member);
  }

  /** Reconcile the links again (who may link changed). */
  resync(): void {
    this.sync();
  }

  leave(): void {
    this.closed = true;
    this.room.provider.awareness.off('change', this.sync);
    for (const off of this.offs) off();
    for (const t of this.retry.values()) clearTimeout(t);
    for (const id of [...this.links.keys()]) this.drop(id, false);
  }

  /** Reconcile links with the room's awareness: who is here, and what they addressed to us. */
  private readonly sync = (): void => {
    if (this.closed) return;
    const roster = this.room.roster();
    const self = this.selfId;
    const present = new Set<string>();
    for (const [cid, m] of roster) {
      const id = String(cid);
      if (id === self || m.kind !== 'participant' || !this.allowed(id)) continue;
      present.add(id);
      const link = this.links.get(id);
      if (link) this.refresh(link, m);
      const theirs = m.audio?.[self];
      if (self < id) {
        // We offer. Apply the answer to our current offer once.
        if (!link && !this.retry.has(id)) void this.offer(id, m).catch(() => this.drop(id, true));
        else if (link && !link.answered && theirs?.type === 'answer' && theirs.gen === link.gen) {
          link.answered = true;
          void link.pc.setRemoteDescription({ type: 'answer', sdp: theirs.sdp }).catch(() => this.drop(id, true));
        }
      } else if (theirs?.type === 'offer' && (!link || link.gen !== theirs.gen) && this.answeredGen.get(id) !== theirs.gen) {
        // A new offer for us (first, or the offerer restarted the link): answer it.
        if (link) this.drop(id, false);
        void this.answer(id, m, theirs).catch(() => this.drop(id, false));
      }
    }
    for (const id of [...this.links.keys()]) if (!present.has(id)) this.drop(id, false);
    for (const id of [...this.answeredGen.keys()]) if (!present.has(id)) this.answeredGen.delete(id);
    for (const id of Object.keys(this.outbox)) {
      if (!present.has(id)) {
        delete this.outbox[id];
        this.publish();
      }
    }
  };

  private async offer(peerId: string, m: MemberState): Promise<void> {
    const link = this.createLink(peerId, m, Math.floor(Math.random() * 2 ** 31), true);
    const channel = link.pc.createDataChannel(AUDIO_CHANNEL_LABEL, AUDIO_CHANNEL_INIT);
    this.net.addPeer(peerId, channel, m.wire ?? 1, this.tracks.trackFor(peerId, m), m.micSince ?? NaN); // transferred before it opens: the page never sees a frame
    await link.pc.setLocalDescription(await link.pc.createOffer());
    await gathered(link.pc);
    if (this.links.get(peerId) !== link) return;
    this.outbox[peerId] = { gen: link.gen, type: 'offer', sdp: link.pc.localDescription!.sdp };
    this.publish();
  }

  private async answer(peerId: string, m: MemberState, offer: AudioSdp): Promise<void> {
    this.answeredGen.set(peerId, offer.gen);
    const link = this.createLink(peerId, m, offer.gen, false);
    link.answered = true;
    await link.pc.setRemoteDescription({ type: 'offer', sdp: offer.sdp });
    await link.pc.setLocalDescription(await link.pc.createAnswer());
    await gathered(link.pc);
    if (this.links.get(peerId) !== link) return;
    this.outbox[peerId] = { gen: link.gen, type: 'answer', sdp: link.pc.localDescription!.sdp };
    this.publish();
  }

  private createLink(peerId: string, m: MemberState, gen: number, offerer: boolean): Link {
    const pc = new RTCPeerConnection({ iceServers: this.iceServers, iceTransportPolicy: iceTransportPolicyFromSettings() });
    const link: Link = { pc, gen, offerer, answered: false, member: { id: peerId, name: '', role: m.role, instrument: '', selfMuted: false, format: m.format, connection: pc.connectionState, audio: false } };
    this.refresh(link, m);
    this.links.set(peerId, link);
    pc.ondatachannel = (ev) => {
      if (ev.channel.label === AUDIO_CHANNEL_LABEL) this.net.addPeer(peerId, ev.channel, m.wire ?? 1, this.tracks.trackFor(peerId, m), m.micSince ?? NaN); // answering side: transfer at once
    };
    pc.onconnectionstatechange = () => {
      link.member.connection = pc.connectionState;
      if (pc.connectionState === 'failed' || pc.connectionState === 'closed') this.drop(peerId, true);
      else this.onchange();
    };
    // A link that never connects (the other side vanished mid-negotiation) is dropped; the
    // offerer then starts over with a new generation.
    setTimeout(() => {
      if (this.links.get(peerId) === link && pc.connectionState !== 'connected') this.drop(peerId, true);
    }, CONNECT_TIMEOUT_MS);
    this.onchange();
    return link;
  }

  private refresh(link: Link, m: MemberState): void {
    Object.assign(link.member, { name: m.name, role: m.role, instrument: m.instrument, selfMuted: m.muted, format: m.format });
    this.tracks.rename(link.member.id, m.name);
    this.onchange();
  }

  private publish(): void {
    this.room.patchSelf({ audio: { ...this.outbox } });
  }

  private update(peerId: string, fn: (m: RemoteMember) => void): void {
    const link = this.links.get(peerId);
    if (!link) return;
    fn(link.member);
    this.onchange();
  }

  /** Close a link. `retry`: the offerer tries again later if the peer is still in the room. */
  private drop(peerId: string, retry: boolean): void {
    const link = this.links.get(peerId);
    if (!link) return;
    this.links.delete(peerId);
    link.pc.onconnectionstatechange = link.pc.ondatachannel = null;
    link.pc.close();
    this.net.removePeer(peerId);
    if (this.outbox[peerId]) {
      delete this.outbox[peerId];
      if (!this.closed) this.publish();
    }
    if (retry && link.offerer && !this.closed) {
      this.retry.set(peerId, setTimeout(() => {
        this.retry.delete(peerId);
        this.sync();
      }, RETRY_MS));
    }
    this.onchange();
  }
}

/** Resolves when ICE gathering completes, or after GATHER_TIMEOUT_MS (the SDP then carries what there is). */
export function gathered(pc: RTCPeerConnection): Promise<void> {
  if (pc.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(t);
      pc.removeEventListener('icegatheringstatechange', check);
      resolve();
    };
    const check = (): void => {
      if (pc.iceGatheringState === 'complete') done();
    };
    const t = setTimeout(done, GATHER_TIMEOUT_MS);
    pc.addEventListener('icegatheringstatechange', check);
  });
}

/**
 * localStorage `tutti.iceTransportPolicy` = 'relay' sends all media through the TURN servers of
 * `tutti.iceServers` (for users behind strict NATs, and the TURN fault tests); otherwise 'all'.
 */
function iceTransportPolicyFromSettings(): RTCIceTransportPolicy {
  try {
    return localStorage.getItem('tutti.iceTransportPolicy') === 'relay' ? 'relay' : 'all';
  } catch {
    return 'all';
  }
}
