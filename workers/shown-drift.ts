// The clock drift shown to people: how fast one remote sender's audio clock runs against our
// output device's, in ppm. Runs in the network worker: a few additions per packet, and per
// report of the output clock from the page (four a second).
//
// Why not the playout rate's estimate (drift-estimator.ts: rendered quanta against sequences
// arrived)? On a real device that slope carries everything that happens between the two sample
// clocks, and three things there are not drift (measured on the bench rig, docs/BENCHMARKS.md):
// the sender's capture buffers reach its worker in a sawtooth (~1000 ppm early for ~22 s, then one
// 21 ms late); our output gains 10–15 ms on the wall clock in the first ~40 s of a join; and now
// and then it loses a step (35 ms once, for good). Together they put a 60–90 s slope hundreds of
// ppm off. So the figure is taken as two slopes that each stay smooth, both against the wall
// clock:
//   A  the sender's samples against its own capture timestamps: the sequence against the packet's
//      capture time (stamped from the device's buffer timestamps, before the delivery sawtooth),
//      per second, the mean;
//   C  our output device's clock: the context time being played against the performance time
//      it is played at (AudioContext.getOutputTimestamp(), which only the page can call; it
//      posts each reading). Not the render counter read at each arrival: arrivals come in bursts
//      every 21.3 ms and the render moves in bursts of 10.7 ms, so those readings alias, and the
//      sawtooth slides their phase (a first version did that, and read ~+800 ppm of sawtooth in
//      the simulation of tests/unit/shown-drift.test.ts).
// drift = (1 + A) / (1 + C) − 1. Each series is fitted by least squares per segment with a
// common slope: a jump of more than STEP_MS between two points starts a new segment, so a lost
// output step or a capture restart shifts the line instead of tilting it. The first SKIP_SECONDS
// of each series are left out (the start-up gain).
// What it assumes: the two machines' wall clocks tick at the same rate (one machine; or clocks
// disciplined by NTP, which agree within about a ppm). A computer whose clock is off by tens of
// ppm adds that to the figure; the playout rate does not depend on this assumption.

import { QUANTUM_MS } from '../src/shared/constants.ts';
import { seqDiff } from '../src/shared/seq.ts';

/** Seconds of a stream left out at its start (the start-up ramp of the render position). */
export const SKIP_SECONDS = 15;
/** Seconds of points before a figure is given; the window kept (~4 min). */
export const MIN_SECONDS = 60;
export const WINDOW_SECONDS = 240;
/** A jump between two seconds' points larger than this starts a new segment (ms). */
export const STEP_MS = 8;
/** Largest ratio reported (±4000 ppm: sound cards stay within ~100, timer-driven fake devices ~1000). */
const MAX_DRIFT = 0.004;

/** Points (t, v) in time order, the last `capacity` kept, fitted as segments that share one slope. */
class SegmentedLine {
  private readonly t: Float64Array;
  private readonly v: Float64Array;
  private readonly seg: Int32Array;
  private next = 0;
  length = 0;
  private segment = 0;
  private last = NaN;

  constructor(private readonly capacity: number) {
    this.t = new Float64Array(capacity);
    this.v = new Float64Array(capacity);
    this.seg = new Int32Array(capacity);
  }

  /** t of the oldest point kept and of the newest. */
  span(): number {
    return this.length < 2 ? 0 : this.t[(this.next - 1 + this.capacity) % this.capacity]! - this.t[(this.next - this.length + this.capacity) % this.capacity]!;
  }

  push(t: number, v: number): void {
    if (this.length > 0 && Math.abs(v - this.last) > STEP_MS) this.segment++;
    this.last = v;
    const i = this.next;
    this.t[i] = t;
    this.v[i] = v;
    this.seg[i] = this.segment;
    this.next = (i + 1) % this.capacity;
    if (this.length < this.capacity) this.length++;
  }

  clear(): void {
    this.length = 0;
    this.next = 0;
    this.last = NaN;
  }

  /** The common slope of the segments (units of v per unit of t), or null with no spread in t. */
  slope(): number | null {
    let sxy = 0;
    let sxx = 0;
    // Points are in time order from the oldest; a segment is a run of equal ids. Two passes per
    // segment (means, then deviations) keep the sums exact however long the stream has run.
    const start = (this.next - this.length + this.capacity) % this.capacity;
    const at = (k: number) => (start + k) % this.capacity;
    let k0 = 0;
    while (k0 < this.length) {
      const id = this.seg[at(k0)]!;
      let k1 = k0;
      let st = 0;
      let sv = 0;
      while (k1 < this.length && this.seg[at(k1)] === id) {
        st += this.t[at(k1)]!;
        sv += this.v[at(k1)]!;
        k1++;
      }
      const n = k1 - k0;
      if (n >= 2) {
        const mt = st / n;
        const mv = sv / n;
        for (let k = k0; k < k1; k++) {
          const dt = this.t[at(k)]! - mt;
          sxx += dt * dt;
          sxy += dt * (this.v[at(k)]! - mv);
        }
      }
      k0 = k1;
    }
    return sxx > 0 ? sxy / sxx : null;
  }
}

/** Readings of the output clock kept: four a second over the window. */
const OUTPUT_READINGS = 4 * WINDOW_SECONDS;

/** C: our output device's clock against the wall clock, from the page's readings. One per worker. */
export class OutputClock {
  private readonly line = new SegmentedLine(OUTPUT_READINGS);
  private started = false;
  private context0 = 0;
  private wall0 = 0;

  /** One reading: the context time (s) being played at wall time `wallMs` (performance.timeOrigin + performanceTime). */
  add(contextTime: number, wallMs: number): void {
    if (!(contextTime > 0) || !Number.isFinite(wallMs)) return; // not playing yet
    if (!this.started) {
      this.started = true;
      this.context0 = contextTime;
      this.wall0 = wallMs;
    }
    const t = wallMs - this.wall0;
    if (t < SKIP_SECONDS * 1000) return;
    this.line.push(t, (contextTime - this.context0) * 1000 - t);
  }

  /** The output clock's rate against the wall clock, minus 1, over the readings kept (null before MIN_SECONDS of them). */
  rate(): number | null {
    return this.line.span() >= MIN_SECONDS * 1000 - 1000 ? this.line.slope() : null;
  }
}

/** A: one remote sender's samples against its capture timestamps, and the figure shown for it. */
export class ShownDrift {
  private readonly line = new SegmentedLine(WINDOW_SECONDS);
  private started = false;
  private seq0 = 0;
  /** The last capture stamp (wire u32 µs) and the µs since the first, unwrapped. */
  private captureLast = 0;
  private captureSinceUs = 0;
  private now0 = 0;
  /** The current second (ms after now0) and what it has gathered. */
  private blockStart = 0;
  private sum = 0;
  private n = 0;
  private lastShown: { ppm: number; seconds: number } | null = null;

  /** One data packet arrived: its sequence and capture time (the wire's u32 µs), at our wall clock `nowMs`. */
  add(seq: number, captureUs: number, nowMs: number): void {
    if (!this.started) {
      this.started = true;
      this.seq0 = seq;
      this.captureLast = captureUs;
      this.captureSinceUs = 0;
      this.now0 = nowMs;
      this.blockStart = SKIP_SECONDS * 1000;
    }
    // The stamp wraps every 2^32 µs (71 min): add the signed 32-bit step from the last one.
    this.captureSinceUs += (captureUs - this.captureLast) | 0;
    this.captureLast = captureUs;
    const t = nowMs - this.now0;
    if (t < SKIP_SECONDS * 1000) return;
    if (t >= this.blockStart + 1000) {
      if (this.n > 0) this.line.push(this.blockStart + 500, this.sum / this.n);
      this.sum = 0;
      this.n = 0;
      this.blockStart += 1000 * Math.floor((t - this.blockStart) / 1000);
    }
    // The sender's samples (nominal ms) ahead of its capture stamps (its wall clock, ms).
    this.sum += seqDiff(seq, this.seq0) * QUANTUM_MS - this.captureSinceUs / 1000;
    this.n++;
  }

  /** A new timeline (resync): sequences jump, so the fit restarts; the last figure stands. */
  reset(): void {
    this.started = false;
    this.line.clear();
    this.sum = 0;
    this.n = 0;
  }

  /**
   * The figure to show (ppm, + = the sender runs fast against our output) with the seconds of
   * arrivals behind it; null until both it and `output` have MIN_SECONDS.
   */
  shown(output: OutputClock): { ppm: number | null; seconds: number } {
    const seconds = this.line.length;
    if (seconds >= MIN_SECONDS) {
      const a = this.line.slope();
      const c = output.rate();
      if (a !== null && c !== null) {
        const drift = Math.max(-MAX_DRIFT, Math.min(MAX_DRIFT, (1 + a) / (1 + c) - 1));
        this.lastShown = { ppm: Math.round(drift * 1e6), seconds };
      }
    }
    return this.lastShown ?? { ppm: null, seconds };
  }
}
