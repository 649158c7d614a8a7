// The baseline's de-jitter queue (runs in its playback worklet; unit-tested in Node): frames are
// stored by sequence number and played one per render quantum, `depth` quanta behind the first
// frame. Late, missed and resync follow Tutti's definitions (workers/jitter-writer.ts, worklets/mixer.ts)
// so the two paths' figures compare: late = arrived after its playout slot passed; 64 late in a row
// restarts the timeline at the next frame.

import { JITTER_SLOTS, QUANTUM_FRAMES, QUANTUM_SAMPLES, clampDepth } from '../../src/shared/constants.ts';
import { seqAdd, seqDiff } from '../../src/shared/seq.ts';
import { Reject, decodeHeader, decodeSamples, newHeader } from '../../src/shared/wire.ts';
import type { BaselineCounters } from './baseline-protocol.ts';

export class JitterQueue {
  readonly counters: BaselineCounters = { received: 0, late: 0, duplicates: 0, rejected: 0, resyncs: 0, played: 0, missed: 0 };
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
    if (ahead < 0) {
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
