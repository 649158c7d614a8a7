// Test option of the network worker (TestOptions.captureRatio): makes this sender's stream run at
// `ratio` × its real clock, as a sound card that is that many ppm off would, so the browser tests
// can show the receiver's drift compensation holding its depth. Linear interpolation is plenty for
// a test signal. Not used outside tests.
//
// The stamps too: a fast card delivers its quanta 2.667 ms / ratio apart on the wall clock, each
// stamped when it was captured. Each output quantum gets the wall time of the input position it
// starts at, on the line through the input's stamps: smooth, ratio × the wall clock. (A first
// version gave the extra quantum the stamp of the one before it, a 2.67 ms step every 2.67 s at
// 1000 ppm fast, which the drift shown, workers/shown-drift.ts, rightly takes for losses, not
// drift: it showed −29 ppm where the playout rate needed +927.)

import { QUANTUM_FRAMES, QUANTUM_SAMPLES, SAMPLE_RATE } from '../src/shared/constants.ts';

/** Microseconds per input frame. */
const FRAME_US = 1e6 / SAMPLE_RATE;

export class TestClockSkew {
  /** Input frames (stereo interleaved), enough for a few quanta of slack. */
  private readonly buf = new Float32Array(QUANTUM_SAMPLES * 8);
  private frames = 0;
  /** Read position in input frames. */
  private pos = 0;
  private readonly step: number;
  /** The capture stamp (µs) of the last input quantum pushed, which starts at buffer frame frames − QUANTUM_FRAMES. */
  private lastStampUs = 0;

  /** ratio > 1 produces more output quanta per input quantum (a faster clock). */
  constructor(ratio: number) {
    this.step = 1 / ratio;
  }

  /** One captured quantum and its capture stamp (µs, as the sender stamps its packets). */
  push(frame: Float32Array, captureUs: number): void {
    // Drop what has been consumed, keeping the frame the read position is in.
    const keep = Math.floor(this.pos);
    if (keep > 0) {
      this.buf.copyWithin(0, 2 * keep, 2 * this.frames);
      this.frames -= keep;
      this.pos -= keep;
    }
    this.buf.set(frame, 2 * this.frames);
    this.frames += QUANTUM_FRAMES;
    this.lastStampUs = captureUs;
  }

  /**
   * Write one output quantum into `out` if enough input is buffered, and return its capture stamp
   * (µs: the input's stamp at the position it starts from); null when more input is needed.
   */
  pull(out: Float32Array): number | null {
    if (this.pos + (QUANTUM_FRAMES - 1) * this.step + 1 >= this.frames) return null;
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const x = this.pos + f * this.step;
      const n = Math.floor(x);
      const t = x - n;
      out[2 * f] = this.buf[2 * n]! * (1 - t) + this.buf[2 * n + 2]! * t;
      out[2 * f + 1] = this.buf[2 * n + 1]! * (1 - t) + this.buf[2 * n + 3]! * t;
    }
    const stampUs = Math.round(this.lastStampUs + (this.pos - (this.frames - QUANTUM_FRAMES)) * FRAME_US);
    this.pos += QUANTUM_FRAMES * this.step;
    return stampUs;
  }
}
