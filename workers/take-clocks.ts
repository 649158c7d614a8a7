// Recorder worker: how far a take's two clocks drift apart. The input track runs on the capture
// device's clock and the heard tracks and the mix on the output device's; the take lines them up
// at its start (heard-tracks.ts), and where the input and the output are different devices (a USB
// microphone and the laptop's speakers, say) their clocks differ by tens of ppm, so over a long
// take the heard tracks slide against the input. Every drain pairs the input frames and the heard
// frames recorded so far (both rings drained at that moment); the least-squares slope of heard on
// input is the ratio of the two clocks. Each ring delivers in bursts (capture buffers of 10-21 ms,
// render bursts), which a line through minutes of pairs averages out. Pure logic; unit-tested.

/**
 * Pairs this far apart (input frames) before a slope is given: a minute. The capture's buffers
 * (up to 21 ms) make the input's count a sawtooth, which reads as up to ~120 ppm over 20 s and
 * ~20 over 60 s (in simulation: tests/unit/take-clocks.test.ts), about a millisecond by the end.
 */
const MIN_SPAN_FRAMES = 60 * 48_000;

export class TakeClocks {
  private n = 0;
  private x0 = 0;
  private y0 = 0;
  // Running means and co-moments of x, y relative to the first pair (Welford: exact for hours of frames).
  private mx = 0;
  private my = 0;
  private cxx = 0;
  private cxy = 0;
  private lastX = 0;

  /** At one moment: input frames recorded so far, and heard frames (render quanta × 128) so far. */
  add(inputFrames: number, heardFrames: number): void {
    if (this.n === 0) {
      this.x0 = inputFrames;
      this.y0 = heardFrames;
    }
    const x = inputFrames - this.x0;
    const y = heardFrames - this.y0;
    this.n++;
    const dx = x - this.mx;
    this.mx += dx / this.n;
    this.my += (y - this.my) / this.n;
    this.cxx += dx * (x - this.mx);
    this.cxy += dx * (y - this.my);
    this.lastX = x;
  }

  /** The output clock against the capture clock, (heard frames per input frame − 1) × 10⁶, or null before a minute. */
  ppm(): number | null {
    if (this.lastX < MIN_SPAN_FRAMES || this.cxx <= 0) return null;
    return (this.cxy / this.cxx - 1) * 1e6;
  }
}
