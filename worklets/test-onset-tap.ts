// Test build only: the playback worklet's output tap. Finds the onsets in what process() hands to
// the speaker (a sample above ONSET after at least QUIET_FRAMES with none above it) and gives each one's
// context frame and largest sample (signed) to the page, which keeps them for the browser tests (src/engine/audio-engine.ts).
// The metronome tests mute the peers, so the onsets are the clicks (or, at a leader, a member's
// test impulses). playback.worklet.ts creates it behind `__TUTTI_TEST__` only: not in production.

const ONSET = 0.05;
/**
 * 30 ms with no sample above ONSET before an onset counts (a click decays below it well within
 * 20 ms). Not "below a silence floor": what the playout resamples (drift control, a depth change)
 * is band-limited, and an impulse then rings ahead of its peak at a few hundredths for a dozen
 * frames; a floor reset the count there and lost such a member's strike at the leader (the
 * leader-mode test heard 14 of 100 strikes that all reached the speaker).
 */
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
      } else if (a < ONSET) this.quiet++;
      else this.quiet = 0;
    }
  }
}
