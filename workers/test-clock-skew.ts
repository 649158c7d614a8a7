// Test option of the network worker (TestOptions.captureRatio): makes this sender's stream run at
// `ratio` × its real clock, as a sound card that is that many ppm off would, so the browser tests
// can show the receiver's drift compensation holding its depth. Linear interpolation is plenty for
// a test signal. Not used outside tests.

import { QUANTUM_FRAMES, QUANTUM_SAMPLES } from '../src/shared/constants.ts';

export class TestClockSkew {
  /** Input frames (stereo interleaved), enough for a few quanta of slack. */
  private readonly buf = new Float32Array(QUANTUM_SAMPLES * 8);
  private frames = 0;
  /** Read position in input frames. */
  private pos = 0;
  private readonly step: number;

  /** ratio > 1 produces more output quanta per input quantum (a faster clock). */
  constructor(ratio: number) {
    this.step = 1 / ratio;
  }

  push(frame: Float32Array): void {
    // Drop what has been consumed, keeping the frame the read position is in.
    const keep = Math.floor(this.pos);
    if (keep > 0) {
      this.buf.copyWithin(0, 2 * keep, 2 * this.frames);
      this.frames -= keep;
      this.pos -= keep;
    }
    this.buf.set(frame, 2 * this.frames);
    this.frames += QUANTUM_FRAMES;
  }

  /** Write one output quantum into `out` if enough input is buffered. */
  pull(out: Float32Array): boolean {
    if (this.pos + (QUANTUM_FRAMES - 1) * this.step + 1 >= this.frames) return false;
    for (let f = 0; f < QUANTUM_FRAMES; f++) {
      const x = this.pos + f * this.step;
      const n = Math.floor(x);
      const t = x - n;
      out[2 * f] = this.buf[2 * n]! * (1 - t) + this.buf[2 * n + 2]! * t;
      out[2 * f + 1] = this.buf[2 * n + 1]! * (1 - t) + this.buf[2 * n + 3]! * t;
    }
    this.pos += QUANTUM_FRAMES * this.step;
    return true;
  }
}
