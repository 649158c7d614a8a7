// Playback worklet: the writing side of the heard ring (src/shared/memory-layout.ts, "Recording
// what we hear"). While a take records, the mixer hands it each rendered peer's quantum (before
// gain) and the mix, and it pushes one whole record per render quantum for the recorder worker.
// Real-time code: the record buffer is preallocated for every peer slot; nothing here allocates.

import { MAX_PEERS, QUANTUM_FRAMES, QUANTUM_SAMPLES } from '../src/shared/constants.ts';
import { HEARD_I32, HEARD_INDEX_MOD, HEARD_RECORD_HEAD, HEARD_TRACK_HEAD, HeardViews, heardRecordFloats } from '../src/shared/memory-layout.ts';

export class HeardWriter {
  private readonly record = new Float32Array(heardRecordFloats(MAX_PEERS));
  private views: HeardViews | null = null;
  private started = false;
  /** Tracks in the record being built; -1 when this quantum builds none. */
  private n = -1;

  /** A take starts (its heard memory) or the page forgets one (null). From the port, never process(). */
  attach(views: HeardViews | null): void {
    this.views = views;
    this.started = false;
    this.n = -1;
  }

  /**
   * Before a render quantum: `index` is the render's number (PLAY_I32.QUANTA before it), `frame`
   * its context frame. Returns whether peers should be added to a record this quantum.
   */
  begin(index: number, frame: number): boolean {
    const v = this.views;
    this.n = -1;
    if (!v) return false;
    if (Atomics.load(v.i32, HEARD_I32.ON) === 0) {
      if (this.started) this.views = null; // the take ended: nothing more goes to this ring
      return false;
    }
    if (!this.started) {
      Atomics.store(v.i32, HEARD_I32.FIRST_FRAME, frame | 0);
      Atomics.store(v.i32, HEARD_I32.STARTED, 1);
      this.started = true;
    }
    this.record[1] = index % HEARD_INDEX_MOD;
    this.n = 0;
    return true;
  }

  /** One peer's quantum (before gain), after begin() returned true. */
  addPeer(track: number, flags: number, l: Float64Array, r: Float64Array): void {
    const rec = this.record;
    const o = HEARD_RECORD_HEAD + this.n * (HEARD_TRACK_HEAD + QUANTUM_SAMPLES);
    rec[o] = track;
    rec[o + 1] = flags;
    const s = o + HEARD_TRACK_HEAD;
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      rec[s + 2 * f] = l[f]!;
      rec[s + 2 * f + 1] = r[f]!;
    }
    this.n++;
  }

  /** The mix as it leaves for the speaker; pushes the record whole, or counts it lost. */
  finish(outL: Float32Array, outR: Float32Array): void {
    const v = this.views;
    const n = this.n;
    if (!v || n < 0) return;
    const rec = this.record;
    rec[0] = n;
    const s = HEARD_RECORD_HEAD + n * (HEARD_TRACK_HEAD + QUANTUM_SAMPLES);
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      rec[s + 2 * f] = outL[f]!;
      rec[s + 2 * f + 1] = outR[f]!;
    }
    const size = heardRecordFloats(n);
    if (v.ring.available_write() >= size) v.ring.push(rec, size);
    else Atomics.add(v.i32, HEARD_I32.OVERFLOWS, 1);
    this.n = -1;
  }
}
