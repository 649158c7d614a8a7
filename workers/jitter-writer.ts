// Network-worker side of one remote peer's de-jitter ring: places each decoded frame in the slot
// of its sequence number, detects late, duplicate and restarted streams, and asks the playback
// worklet to resynchronise. Runs in the network worker; unit-tested in Node.

import { JITTER_SLOTS, MAX_REDUNDANCY, QUANTUM_FRAMES, RESAMPLER_HALF as HALF, SAMPLE_RATE, clampDepth } from '../src/shared/constants.ts';
import { FILL_RING, PEER_F32, PEER_I32, PeerState, PlaybackViews, marginFrames, playPosition, slotOf } from '../src/shared/memory-layout.ts';
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
  /** Missing frames filled in time from the redundant copies of later packets. */
  recovered: number;
  late: number;
  duplicates: number;
  resyncs: number;
  /** Stragglers of the stream a restart replaced. */
  stale: number;
  /**
   * A resync of the same stream ahead (the playout fell a ring behind): frames it passed over that
   * had not come (lost, or late if they still come), counted with the worklet's MISSED...
   */
  resyncMissed: number;
  /** ...and frames it passed over that had come but never played (a backlog cut, like a trim). */
  resyncDiscarded: number;
}

/**
 * A same stream's jump ahead of more than this many frames (10 s) is taken for a sender that
 * restarted its count, not frames lost: nothing counted. Below it, every frame jumped over was not
 * delivered (the sender's count runs on through its congestion drops: a congested TURN path in a
 * rehearsal dropped bursts beyond a second, whose frames went uncounted under a smaller limit).
 */
const RESYNC_COUNT_LIMIT = Math.round((10 * SAMPLE_RATE) / QUANTUM_FRAMES);
/** A resync this far ahead at most keeps the last `depth` quanta (a catch-up, see resync()). */
const CATCH_UP_LIMIT = 4 * JITTER_SLOTS;

/** Claim a FREE peer slot, or -1 when all MAX_PEERS are in use. */
export function findFreePeer(v: PlaybackViews, maxPeers: number): number {
  for (let p = 0; p < maxPeers; p++) {
    if (Atomics.load(v.i32, v.peerI32(p, PEER_I32.STATE)) === PeerState.FREE) return p;
  }
  return -1;
}

export class JitterWriter {
  readonly counters: ReceiverCounters = { received: 0, recovered: 0, late: 0, duplicates: 0, resyncs: 0, stale: 0, resyncMissed: 0, resyncDiscarded: 0 };
  /** Frames of audio ahead of this frame when it arrived (its buffer fill; negative = late). */
  lastMarginFrames = 0;
  /** The sequences the last accept() stored from the packet's copies (the first `recoveredNow`). */
  readonly recoveredSeqs = new Uint32Array(MAX_REDUNDANCY);
  recoveredNow = 0;
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
    /** The participant's recording track (PEER_I32.TRACK; 0: none). */
    track = 0,
  ) {
    const i = v.i32;
    if (Atomics.load(i, v.peerI32(peer, PEER_I32.STATE)) !== PeerState.FREE) throw new Error(`peer slot ${peer} is not free`);
    this.depth = clampDepth(depth);
    this.resyncGen = Atomics.load(i, v.peerI32(peer, PEER_I32.RESYNC_GEN));
    Atomics.store(i, v.peerI32(peer, PEER_I32.TARGET_DEPTH), this.depth);
    Atomics.store(i, v.peerI32(peer, PEER_I32.MUTED), 0);
    Atomics.store(i, v.peerI32(peer, PEER_I32.TRIM_ABOVE), 0);
    Atomics.store(i, v.peerI32(peer, PEER_I32.SUSTAINED_ABOVE), 0);
    Atomics.store(i, v.peerI32(peer, PEER_I32.TRIM_NOW), 0);
    Atomics.store(i, v.peerI32(peer, PEER_I32.TRACK), track | 0);
    for (const f of [PEER_I32.PLAYED, PEER_I32.MISSED, PEER_I32.CONCEALED, PEER_I32.UNDERRUNS, PEER_I32.FILL_COUNT, PEER_I32.TRIMMED]) Atomics.store(i, v.peerI32(peer, f), 0);
    v.f32[v.peerF32(peer, PEER_F32.GAIN)] = gain;
    v.f32[v.peerF32(peer, PEER_F32.RATE)] = 1;
    v.f32[v.peerF32(peer, PEER_F32.PEAK)] = 0;
    // Publish: everything above is visible to play once it sees ACTIVE.
    Atomics.store(i, v.peerI32(peer, PEER_I32.STATE), PeerState.ACTIVE);
  }

  /** Hand the slot back; play frees it at its next quantum. */
  release(): void {
    Atomics.store(this.v.i32, this.v.peerI32(this.peer, PEER_I32.STATE), PeerState.CLOSING);
  }

  /** Target depth in quanta: where a resync places the cursor, and what play rebuffers to after an outage. */
  setDepth(depth: number): void {
    this.depth = clampDepth(depth);
    Atomics.store(this.v.i32, this.v.peerI32(this.peer, PEER_I32.TARGET_DEPTH), this.depth);
  }

  /** The excess the worklet lets the low point keep without a trim (PEER_I32.TRIM_ABOVE). */
  setTrimAbove(quanta: number): void {
    Atomics.store(this.v.i32, this.v.peerI32(this.peer, PEER_I32.TRIM_ABOVE), quanta | 0);
  }

  /** The excess the worklet's sustained rule alone lets the low point keep (PEER_I32.SUSTAINED_ABOVE). */
  setSustainedAbove(quanta: number): void {
    Atomics.store(this.v.i32, this.v.peerI32(this.peer, PEER_I32.SUSTAINED_ABOVE), quanta | 0);
  }

  /** Trim a backlog of up to `quanta` at the next fill window (PEER_I32.TRIM_NOW): this machine stalled. */
  trimNow(quanta: number): void {
    Atomics.store(this.v.i32, this.v.peerI32(this.peer, PEER_I32.TRIM_NOW), Math.max(0, quanta | 0));
  }

  private fillSeen = 0;
  /** The worklet's TRIMMED total when the window nextFillWindow() last returned closed (PEER_I32.FILL_TRIMMED). */
  windowTrimmed = 0;

  /** The next fill-window low point (frames) play has published that we have not read, or null. */
  nextFillWindow(): number | null {
    const v = this.v;
    const count = Atomics.load(v.i32, v.peerI32(this.peer, PEER_I32.FILL_COUNT));
    if (count - this.fillSeen > FILL_RING) this.fillSeen = count - FILL_RING; // fell behind: skip
    if (this.fillSeen >= count) return null;
    const low = Atomics.load(v.i32, v.peerI32(this.peer, PEER_I32.FILL_MIN + (this.fillSeen % FILL_RING)));
    this.windowTrimmed = Atomics.load(v.i32, v.peerI32(this.peer, PEER_I32.FILL_TRIMMED + (this.fillSeen % FILL_RING)));
    this.fillSeen++;
    return low;
  }

  get depthTarget(): number {
    return this.depth;
  }

  /** The playout rate the controller wants (see PEER_F32.RATE). */
  setRate(rate: number): void {
    this.v.f32[this.v.peerF32(this.peer, PEER_F32.RATE)] = rate;
  }

  /** Where playout is, in stream frames (see PEER_I32.PLAY_POS), or where a pending resync will put it. */
  playPos(): number {
    const i = this.v.i32;
    const acked = Atomics.load(i, this.v.peerI32(this.peer, PEER_I32.ACK_GEN));
    if (acked !== this.resyncGen) return playPosition(this.pendingCursor, HALF);
    return Atomics.load(i, this.v.peerI32(this.peer, PEER_I32.PLAY_POS));
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

  /** Read a worklet-side counter (PLAYED, MISSED, CONCEALED, UNDERRUNS). */
  playCounter(field: number): number {
    return Atomics.load(this.v.i32, this.v.peerI32(this.peer, field)) >>> 0;
  }

  /** Place an accepted packet (header `h`, bytes `view`) into the ring. */
  accept(h: PacketHeader, view: DataView): Arrival {
    const seq = h.sequence;
    this.recoveredNow = 0;
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
    // Redundant copies first: even a duplicate or reordered packet may carry a frame still missing.
    if (h.redundancy > 0 && ahead >= 0 && ahead < JITTER_SLOTS) this.recover(h, view, cursor);
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
    this.lastMarginFrames = marginFrames(seq, this.playPos());
    return Arrival.ON_TIME;
  }

  /** Store the packet's copies of sequence − k that are missing and still ahead of playout. */
  private recover(h: PacketHeader, view: DataView, cursor: number): void {
    const v = this.v;
    const i = v.i32;
    for (let k = 1; k <= h.redundancy; k++) {
      const s = seqAdd(h.sequence, -k);
      if (seqDiff(s, cursor) < 0 || seqDiff(s, this.firstSeq) < 0) break; // older ones are older still
      const slot = slotOf(s);
      if (Atomics.load(i, v.tag(this.peer, slot)) === (s | 0)) continue;
      decodeSamples(view, h, v.f32, v.samples(this.peer, slot), k);
      Atomics.store(i, v.tag(this.peer, slot), s | 0);
      this.counters.recovered++;
      this.recoveredSeqs[this.recoveredNow++] = s;
    }
  }

  /**
   * Before a resync of the same stream to `seq`, ahead of the playout: the frames of the current
   * timeline from the cursor up to `until` (`seq`, or where a catch-up starts) will never play.
   * Those that had not come count missed (so lost, or late if they still come), those that had
   * count discarded: the listener loses both, and a buffer reset must not hide what the network
   * lost (a quarter of a lossy sender's frames read 24.0 % through three resets in 10 s). The
   * `copies` quanta before `seq` came in this very packet (at two quanta per packet, the pair's
   * first): discarded, not missed (counted missed, a churn run read one frame lost per resync
   * beyond what the sender had dropped). (The worklet may take a frame between the cursor read
   * here and its adoption of the resync: at most one counted twice.)
   */
  private countPassedOver(until: number, seq: number, copies: number): void {
    const v = this.v;
    const i = v.i32;
    let from = this.cursor();
    if (seqDiff(this.firstSeq, from) > 0) from = this.firstSeq; // before the timeline's first frame: silence, nothing missing
    const n = seqDiff(until, from);
    if (n <= 0 || n > RESYNC_COUNT_LIMIT) return;
    for (let k = 0; k < n; k++) {
      const s = seqAdd(from, k);
      const slot = slotOf(s);
      const carried = seqDiff(seq, s) <= copies;
      const held = carried || (seqDiff(s, this.newest) <= 0 && Atomics.load(i, v.tag(this.peer, slot)) === (s | 0));
      if (!held) this.counters.resyncMissed++;
      else if (carried) this.counters.resyncDiscarded++;
      else if (Atomics.load(i, v.taken(this.peer, slot)) !== (s | 0)) this.counters.resyncDiscarded++;
    }
  }

  private resync(h: PacketHeader, view: DataView): void {
    const v = this.v;
    const i = v.i32;
    const seq = h.sequence;
    const same = this.started && h.streamId === this.streamId;
    // Catch-up: the same stream, a ring or more ahead of the playout but not so far that the
    // sender jumped (our playout fell behind: this machine's audio thread, or waits on an empty
    // buffer that bursts then refilled). The frames of the last `depth` quanta are this timeline's
    // and play on from the new cursor: a jump, not a jump and then `depth` quanta of silence.
    const ahead = same ? seqDiff(seq, this.cursor()) : 0;
    const catchUp = ahead >= JITTER_SLOTS && ahead <= CATCH_UP_LIMIT;
    const start = catchUp ? seqAdd(seq, -this.depth) : seq;
    if (this.started) this.counters.resyncs++;
    if (same) this.countPassedOver(start, seq, h.redundancy);
    if (this.started && h.streamId !== this.streamId) this.previousStreamId = this.streamId;
    this.started = true;
    this.streamId = h.streamId;
    this.consecutiveLate = 0;
    this.firstSeq = start;
    this.pendingCursor = seqAdd(seq, -this.depth);
    // Invalidate every slot (tags half the sequence space away can never match a cursor soon), but
    // at a catch-up the frames from `start` on, which the worklet will play (it is a ring behind
    // them: it reads none of these slots meanwhile).
    for (let s = 0; s < JITTER_SLOTS; s++) {
      const tag = Atomics.load(i, v.tag(this.peer, s)) >>> 0;
      if (!(catchUp && seqDiff(tag, start) >= 0 && seqDiff(tag, seq) < 0)) Atomics.store(i, v.tag(this.peer, s), seqAdd(seq, 0x80000000 + s) | 0);
      Atomics.store(i, v.taken(this.peer, s), seqAdd(seq, 0x80000000 + s) | 0);
    }
    const slot = slotOf(seq);
    decodeSamples(view, h, v.f32, v.samples(this.peer, slot));
    Atomics.store(i, v.tag(this.peer, slot), seq | 0);
    this.newest = seq;
    Atomics.store(i, v.peerI32(this.peer, PEER_I32.NEWEST), seq | 0);
    // At a catch-up the packet's copies are this timeline's frames too.
    if (catchUp && h.redundancy > 0) this.recover(h, view, start);
    // Seqlock: RESYNC_GEN is odd while the two fields change, even (and new) once they are whole.
    const genIdx = v.peerI32(this.peer, PEER_I32.RESYNC_GEN);
    Atomics.store(i, genIdx, (this.resyncGen + 1) | 0);
    Atomics.store(i, v.peerI32(this.peer, PEER_I32.RESYNC_CURSOR), this.pendingCursor | 0);
    Atomics.store(i, v.peerI32(this.peer, PEER_I32.RESYNC_FIRST), start | 0);
    this.resyncGen = (this.resyncGen + 2) | 0;
    Atomics.store(i, genIdx, this.resyncGen); // publishes the resync
    this.counters.received++;
    this.lastMarginFrames = this.depth * QUANTUM_FRAMES + HALF;
  }
}
