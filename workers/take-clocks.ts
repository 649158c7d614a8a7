// Recorder worker: how far a take's two clocks drift apart. The input track runs on the capture
// device's clock and the heard tracks and the mix on the output device's; the take lines them up
// at its start (heard-tracks.ts), and where the input and the output are different devices (a USB
// microphone and the laptop's speakers, say) their clocks differ by tens of ppm, so over a long
// take the heard tracks slide against the input. Every drain pairs the input frames and the heard
// frames recorded so far (both rings drained at that moment); how much later the heard count runs
// against the input count at the end of the take than at its start is the slide, and over the
// frames between, the ratio of the clocks. Each end is the mean over ~10 s of pairs: the rings
// deliver in bursts (capture buffers of 10-21 ms, render bursts), which that averages out. Two
// ends, not a line through every pair: in a 600 s browser take a least-squares line read −24 ppm
// (14 ms by the end) where the two tracks' frame counts at the stop agreed to within the heard
// offset (under 1 ppm). A stretch where one ring runs behind and later catches up bends a line
// but not the ends, and where the tracks end up is what their alignment is. Pure logic;
// unit-tested.

/** Input frames each end averages over (10 s). */
const END_FRAMES = 10 * 48_000;
/** Pairs kept for the closing end: 10 s of 50 ms drains, with room for a faster drain. */
const RING = 512;
/** Frames between the two ends' centres before a figure is given: a minute. */
const MIN_SPAN_FRAMES = 60 * 48_000;

export class TakeClocks {
  private firstX: number | null = null;
  /** The opening end: sums over the pairs in the first END_FRAMES of input. */
  private openN = 0;
  private openX = 0;
  private openD = 0;
  /** The last pairs (input frames, heard − input), a ring. */
  private readonly xs = new Float64Array(RING);
  private readonly ds = new Float64Array(RING);
  private next = 0;
  private count = 0;

  /** At one moment: input frames recorded so far, and heard frames (render quanta × 128) so far. */
  add(inputFrames: number, heardFrames: number): void {
    this.firstX ??= inputFrames;
    const d = heardFrames - inputFrames;
    if (inputFrames - this.firstX < END_FRAMES) {
      this.openN++;
      this.openX += inputFrames;
      this.openD += d;
    }
    this.xs[this.next] = inputFrames;
    this.ds[this.next] = d;
    this.next = (this.next + 1) % RING;
    if (this.count < RING) this.count++;
  }

  /** How many more frames the heard tracks ran than the input from the opening end to the latest, and over how many input frames; null before a minute. */
  private ends(): { slide: number; span: number } | null {
    if (this.openN === 0 || this.count === 0) return null;
    const lastX = this.xs[(this.next - 1 + RING) % RING]!;
    let n = 0;
    let sx = 0;
    let sd = 0;
    for (let i = 1; i <= this.count; i++) {
      const k = (this.next - i + RING) % RING;
      if (lastX - this.xs[k]! >= END_FRAMES) break;
      n++;
      sx += this.xs[k]!;
      sd += this.ds[k]!;
    }
    const span = sx / n - this.openX / this.openN;
    if (span < MIN_SPAN_FRAMES) return null;
    return { slide: sd / n - this.openD / this.openN, span };
  }

  /** The output clock against the capture clock, (heard frames per input frame − 1) × 10⁶, or null before a minute. */
  ppm(): number | null {
    const e = this.ends();
    return e ? (e.slide / e.span) * 1e6 : null;
  }

  /** How many frames later the heard tracks sit against the input at the latest pair than at the take's start, or null before a minute. */
  driftFrames(latestInputFrames: number): number | null {
    const e = this.ends();
    if (!e || this.firstX === null) return null;
    return (e.slide / e.span) * (latestInputFrames - this.firstX);
  }
}
