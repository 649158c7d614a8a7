// Test build only: the playback worklet's output tap. Finds the onsets in what process() hands to
// the speaker (a sample above ONSET after at least QUIET_FRAMES below SILENCE) and gives each one's
// context frame and largest sample (signed) to the page, which keeps them for the browser tests (src/engine/audio-engine.ts).
// The metronome tests mute the peers, so the onsets are the clicks (or, at a leader, a member's
// test impulses). playback.worklet.ts creates it behind `__TUTTI_TEST__` only: not in production.

const ONSET = 0.05;
const SILENCE = 0.005;
/** 30 ms of near silence before an onset counts (a click decays below SILENCE within about 20 ms). */
const QUIET_FRAMES = 1440;

/** After an onset, its largest sample (with its sign) is sought over this many frames. */
const PEAK_FRAMES = 16;

export class OnsetTap {
  private quiet = 0;
  /** The onset being measured: its frame, the largest sample so far, frames left to look at. */
  private at = 0;
  private peak = 0;
  private left = 0;
  constructor(private readonly found: (frame: number, peak: number) => void) {}

  scan(out: Float32Array, frame: number): void {
    for (let f = 0; f < out.length; f++) {
      const x = out[f]!;
      const a = x > 0 ? x : -x;
      if (this.left > 0) {
        if (a > (this.peak > 0 ? this.peak : -this.peak)) this.peak = x;
        if (--this.left === 0) this.found(this.at, this.peak);
      }
      if (a >= ONSET && this.quiet >= QUIET_FRAMES) {
        this.at = frame + f;
        this.peak = x;
        this.left = PEAK_FRAMES;
        this.quiet = 0;
      } else if (a < SILENCE) this.quiet++;
      else this.quiet = 0;
    }
  }
}
