// Network-worker side of one remote peer's de-jitter ring: places each decoded frame in the slot
// of its sequence number, detects late, duplicate and restarted streams, and asks the playback
// worklet to resynchronise. Runs in the network worker; unit-tested in Node.

import { JITTER_SLOTS, clampDepth } from '../src/shared/constants.ts';
import { PEER_F32, PEER_I32, PeerState, PlaybackViews, slotOf } from '../src/shared/memory-layout.ts';
import { seqAdd, seqDiff } from '../src/shared/seq.ts';
import { decodeSamples, type PacketHeader } from '../src/shared/wire.ts';

export const Arrival = {
  /** Stored in its slot ahead of playout. */
  ON_TIME: 0,
  /** Its playout slot had passed; dropped. */
  LATE: 1,
  /** Already stored or already played; dropped. */
  DUPLICATE: 2,
  /** First frame, a new stream id, or a sequence jump: playout restarts from this frame. */
  RESYNC: 3,
} as const;
export type Arrival = (typeof Arrival)[keyof typeof Arrival];

/** After this many late frames in a row the sender's clock is taken to have jumped: resync. */
export const RESYNC_AFTER_LATE = JITTER_SLOTS;

export interface ReceiverCounters {
  /** Frames stored in time (each distinct sequence once). */
  received: number;
  late: number;
  duplicates: number;
  resyncs: number;
  /** Stragglers of the stream a restart replaced. */
  stale: number;
}

/** Claim a FREE peer slot, or -1 when all MAX_PEERS are in use. */
export function findFreePeer(v: PlaybackViews, maxPeers: number): number {
  for (let p = 0; p < maxPeers; p++) {
    if (Atomics.load(v.i32, v.peerI32(p, PEER_I32.STATE)) === PeerState.FREE) return p;
  }
  return -1;
}

export class JitterWriter {
  readonly counters: ReceiverCounters = { received: 0, late: 0, duplicates: 0, resyncs: 0, stale: 0 };
  /** Quanta between this frame and the playout cursor at arrival (for the latency estimate). */
  lastAhead = 0;
  private started = false;
  private streamId = -1;
  /** The stream a restart replaced: its stragglers are late, not a reason to switch back. */
  private previousStreamId = -1;
  private consecutiveLate = 0;
  /** Cursor the worklet will adopt when it acknowledges the pending resync. */
  private pendingCursor = 0;
  private resyncGen = 0;
  private newest = 0;
  /** First sequence of the current timeline: older frames in a slot belong to a previous one. */
  private firstSeq = 0;
  private depth: number;

  /** Initialise FREE slot `peer` (play does not touch FREE slots) and publish it ACTIVE. */
  constructor(
    private readonly v: PlaybackViews,
    readonly peer: number,
    depth: number,
    gain = 1,
  ) {
    const i = v.i32;
    if (Atomics.load(i, v.peerI32(peer, PEER_I32.STATE)) !== PeerState.FREE) throw new Error(`peer slot ${peer} is not free`);
    this.depth = clampDepth(depth);
    this.resyncGen = Atomics.load(i, v.peerI32(peer, PEER_I32.RESYNC_GEN));
    Atomics.store(i, v.peerI32(peer, PEER_I32.TARGET_DEPTH), this.depth);
    Atomics.store(i, v.peerI32(peer, PEER_I32.MUTED), 0);
    for (const f of [PEER_I32.PLAYED, PEER_I32.MISSED, PEER_I32.SKIPPED, PEER_I32.DEPTH]) Atomics.store(i, v.peerI32(peer, f), 0);
    v.f32[v.peerF32(peer, PEER_F32.GAIN)] = gain;
    v.f32[v.peerF32(peer, PEER_F32.PEAK)] = 0;
    // Publish: everything above is visible to play once it sees ACTIVE.
    Atomics.store(i, v.peerI32(peer, PEER_I32.STATE), PeerState.ACTIVE);
  }

  /** Hand the slot back; play frees it at its next quantum. */
  release(): void {
    Atomics.store(this.v.i32, this.v.peerI32(this.peer, PEER_I32.STATE), PeerState.CLOSING);
  }

  setDepth(depth: number): void {
    this.depth = clampDepth(depth);
    Atomics.store(this.v.i32, this.v.peerI32(this.peer, PEER_I32.TARGET_DEPTH), this.depth);
  }

  setGain(gain: number): void {
    this.v.f32[this.v.peerF32(this.peer, PEER_F32.GAIN)] = Math.min(4, Math.max(0, gain));
  }

  setMuted(muted: boolean): void {
    Atomics.store(this.v.i32, this.v.peerI32(this.peer, PEER_I32.MUTED), muted ? 1 : 0);
  }

  /** Where playout is: the worklet's cursor, or the cursor of a resync it has not adopted yet. */
  cursor(): number {
    const i = this.v.i32;
    const acked = Atomics.load(i, this.v.peerI32(this.peer, PEER_I32.ACK_GEN));
    if (acked !== this.resyncGen) return this.pendingCursor;
    return Atomics.load(i, this.v.peerI32(this.peer, PEER_I32.CURSOR)) >>> 0;
  }

  /** Read a worklet-side counter (PLAYED, MISSED, SKIPPED, DEPTH). */
  playCounter(field: number): number {
    return Atomics.load(this.v.i32, this.v.peerI32(this.peer, field)) >>> 0;
  }

  /** Place an accepted packet (header `h`, bytes `view`) into the ring. */
  accept(h: PacketHeader, view: DataView): Arrival {
    const seq = h.sequence;
    if (this.started && h.streamId === this.previousStreamId) {
      this.counters.stale++;
      return Arrival.LATE;
    }
    if (!this.started || h.streamId !== this.streamId) {
      this.resync(h, view);
      return Arrival.RESYNC;
    }
    const v = this.v;
    const i = v.i32;
    const cursor = this.cursor();
    const ahead = seqDiff(seq, cursor);
    const slot = slotOf(seq);
    if (ahead < 0) {
      if ((Atomics.load(i, v.taken(this.peer, slot)) | 0) === (seq | 0)) {
        this.counters.duplicates++;
        return Arrival.DUPLICATE;
      }
      if (this.consecutiveLate + 1 >= RESYNC_AFTER_LATE) {
        this.resync(h, view); // this frame starts the new timeline: counted received, not late
        return Arrival.RESYNC;
      }
      this.consecutiveLate++;
      this.counters.late++;
      return Arrival.LATE;
    }
    if (ahead >= JITTER_SLOTS) {
      // Too far ahead to store without overwriting unplayed frames: the sender jumped.
      this.resync(h, view);
      return Arrival.RESYNC;
    }
    this.consecutiveLate = 0;
    const old = Atomics.load(i, v.tag(this.peer, slot));
    if (old === (seq | 0)) {
      this.counters.duplicates++;
      return Arrival.DUPLICATE;
    }
    // The previous occupant was stored in time but the worklet passed its slot before the tag
    // landed (a race of microseconds): it was never played, so it was late after all.
    if (old !== Atomics.load(i, v.taken(this.peer, slot)) && seqDiff(old >>> 0, cursor) < 0 && seqDiff(old >>> 0, this.firstSeq) >= 0) {
      this.counters.late++;
      this.counters.received--;
    }
    decodeSamples(view, h, v.f32, v.samples(this.peer, slot));
    Atomics.store(i, v.tag(this.peer, slot), seq | 0); // publishes the samples above
    this.counters.received++;
    if (seqDiff(seq, this.newest) > 0) {
      this.newest = seq;
      Atomics.store(i, v.peerI32(this.peer, PEER_I32.NEWEST), seq | 0);
    }
    this.lastAhead = ahead;
    return Arrival.ON_TIME;
  }

  private resync(h: PacketHeader, view: DataView): void {
    const v = this.v;
    const i = v.i32;
    const seq = h.sequence;
    if (this.started) this.counters.resyncs++;
    if (this.started && h.streamId !== this.streamId) this.previousStreamId = this.streamId;
    this.started = true;
    this.streamId = h.streamId;
    this.consecutiveLate = 0;
    this.firstSeq = seq;
    this.pendingCursor = seqAdd(seq, -this.depth);
    // Invalidate every slot: tags half the sequence space away can never match a cursor soon.
    for (let s = 0; s < JITTER_SLOTS; s++) {
      Atomics.store(i, v.tag(this.peer, s), seqAdd(seq, 0x80000000 + s) | 0);
      Atomics.store(i, v.taken(this.peer, s), seqAdd(seq, 0x80000000 + s) | 0);
    }
    const slot = slotOf(seq);
    decodeSamples(view, h, v.f32, v.samples(this.peer, slot));
    Atomics.store(i, v.tag(this.peer, slot), seq | 0);
    this.newest = seq;
    Atomics.store(i, v.peerI32(this.peer, PEER_I32.NEWEST), seq | 0);
    // Seqlock: RESYNC_GEN is odd while the two fields change, even (and new) once they are whole.
    const genIdx = v.peerI32(this.peer, PEER_I32.RESYNC_GEN);
    Atomics.store(i, genIdx, (this.resyncGen + 1) | 0);
    Atomics.store(i, v.peerI32(this.peer, PEER_I32.RESYNC_CURSOR), this.pendingCursor | 0);
    Atomics.store(i, v.peerI32(this.peer, PEER_I32.RESYNC_FIRST), seq | 0);
    this.resyncGen = (this.resyncGen + 2) | 0;
    Atomics.store(i, genIdx, this.resyncGen); // publishes the resync
    this.counters.received++;
    this.lastAhead = this.depth;
  }
}
