// The baseline's de-jitter queue (runs in its playback worklet; unit-tested in Node): frames are
// stored by sequence number and played one per render quantum, `depth` quanta behind the first
// frame. Late, missed and resync follow Tutti's definitions (workers/jitter-writer.ts, worklets/peer-playout.ts)
// so the two paths' figures compare: late = arrived after its playout slot passed; 64 late in a row
// restarts the timeline at the next frame. Redundant copies fill missing frames still ahead of
// playout, and a packet whose frame was already played from a copy is a duplicate, not late, as in
// Tutti's writer: the baseline's sender carries the same copies as Tutti's (P3 compares threads).

import { JITTER_SLOTS, QUANTUM_FRAMES, QUANTUM_SAMPLES, clampDepth } from '../../src/shared/constants.ts';
import { seqAdd, seqDiff } from '../../src/shared/seq.ts';
import { Reject, decodeHeader, decodeSamples, newHeader, type PacketHeader } from '../../src/shared/wire.ts';
import type { BaselineCounters } from './baseline-protocol.ts';

export class JitterQueue {
  readonly counters: BaselineCounters = { received: 0, late: 0, duplicates: 0, rejected: 0, resyncs: 0, played: 0, missed: 0 };
  /**
   * Frames stored from redundant copies because their own packet was lost or not there yet (Tutti's
   * PeerStats.recovered). Beside `counters` rather than in it: BaselineCounters keeps the shape the
   * queue's unit tests compare whole.
   */
  recovered = 0;
  private readonly samples = new Float32Array(JITTER_SLOTS * QUANTUM_SAMPLES);
  private readonly tags = new Int32Array(JITTER_SLOTS);
  private readonly header = newHeader();
  private started = false;
  private cursor = 0;
  private first = 0;
  private consecutiveLate = 0;

  constructor(private depth: number) {
    this.depth = clampDepth(depth);
  }

  setDepth(depth: number): void {
    this.depth = clampDepth(depth);
  }

  /** Store one received packet (the whole wire-format message). */
  push(packet: ArrayBuffer): void {
    const view = new DataView(packet);
    const h = this.header;
    if (decodeHeader(view, h) !== Reject.OK) {
      this.counters.rejected++;
      return;
    }
    const seq = h.sequence;
    if (!this.started) return this.resync(seq, view);
    const ahead = seqDiff(seq, this.cursor);
    // Copies first: even a duplicate or reordered packet may carry a frame still missing.
    if (h.redundancy > 0 && ahead >= 0 && ahead < JITTER_SLOTS) this.recover(h, view);
    if (ahead < 0) {
      // Its slot passed with the frame in it (played from a copy, or a second copy of the packet).
      if (this.tags[seq % JITTER_SLOTS] === (seq | 0)) {
        this.counters.duplicates++;
        return;
      }
      if (++this.consecutiveLate >= JITTER_SLOTS) return this.resync(seq, view);
      this.counters.late++;
      return;
    }
    if (ahead >= JITTER_SLOTS) return this.resync(seq, view);
    this.consecutiveLate = 0;
    const slot = seq % JITTER_SLOTS;
    if (this.tags[slot] === (seq | 0)) {
      this.counters.duplicates++;
      return;
    }
    decodeSamples(view, h, this.samples, slot * QUANTUM_SAMPLES);
    this.tags[slot] = seq | 0;
    this.counters.received++;
  }

  /** Play the frame under the cursor (or silence) into `outL`/`outR`, then advance one quantum. */
  render(outL: Float32Array, outR: Float32Array): void {
    if (!this.started) {
      outL.fill(0);
      outR.fill(0);
      return;
    }
    const slot = this.cursor % JITTER_SLOTS;
    if (this.tags[slot] === (this.cursor | 0)) {
      const base = slot * QUANTUM_SAMPLES;
      for (let f = 0; f < QUANTUM_FRAMES; f++) {
        outL[f] = this.samples[base + 2 * f]!;
        outR[f] = this.samples[base + 2 * f + 1]!;
      }
      this.counters.played++;
    } else {
      outL.fill(0);
      outR.fill(0);
      if (seqDiff(this.cursor, this.first) >= 0) this.counters.missed++;
    }
    this.cursor = seqAdd(this.cursor, 1);
  }

  /** Store the packet's copies of sequence − k that are missing and still ahead of playout. */
  private recover(h: PacketHeader, view: DataView): void {
    for (let k = 1; k <= h.redundancy; k++) {
      const s = seqAdd(h.sequence, -k);
      if (seqDiff(s, this.cursor) < 0 || seqDiff(s, this.first) < 0) break; // older ones are older still
      const slot = s % JITTER_SLOTS;
      if (this.tags[slot] === (s | 0)) continue;
      decodeSamples(view, h, this.samples, slot * QUANTUM_SAMPLES, k);
      this.tags[slot] = s | 0;
      this.recovered++;
    }
  }

  private resync(seq: number, view: DataView): void {
    if (this.started) this.counters.resyncs++;
    this.started = true;
    this.consecutiveLate = 0;
    this.first = seq;
    this.cursor = seqAdd(seq, -this.depth);
    for (let s = 0; s < JITTER_SLOTS; s++) this.tags[s] = seqAdd(seq, 0x80000000 + s) | 0;
    const slot = seq % JITTER_SLOTS;
    decodeSamples(view, this.header, this.samples, slot * QUANTUM_SAMPLES);
    this.tags[slot] = seq | 0;
    this.counters.received++;
  }
}
