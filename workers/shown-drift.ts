// The clock drift shown to people: how fast one remote sender's audio clock runs against our
// output device's, in ppm. Runs in the network worker: a few additions per packet, and per
// report of the output clock from the page (twenty a second; the fit takes four of them).
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
// drift = (1 + A) / (1 + C) − 1. Each series is averaged per second and fitted by least squares
// per segment with a common slope: a jump of more than STEP_MS between two seconds starts a new
// segment, so a lost output step or a capture restart shifts the line instead of tilting it.
// STEP_MS is less than one quantum: a headless browser on a busy machine loses its fake devices'
// callbacks 2.7 to 60 ms at a time on both sides, and a first version, which split at 8 ms, fitted
// the smaller losses as slope (1866 ppm shown for a sender 1000 ppm fast in a clean-clone run); at
// 2 ms, a CI run's many losses of 0.5–1.9 ms still read as slope (740 ppm instead of 1000 on its
// series, tests/unit/shown-drift.test.ts), at 1.5 ms they read 975; at 1 ms the per-second scatter
// itself splits segments (7 ppm off in the clean simulation, where 5 is the bound).
// Per-second means move by 0.2 ms from one second to the next on the bench rig (0.4 ms at the
// 90th percentile), and a capture stamp that is a few ms off for one buffer moves its second's
// mean by a tenth of a ms, so neither starts a segment. A jump inside a second splits between two
// seconds' steps (a 2.7 ms loss mid-second: two of 1.3 ms); that second is then a segment of its
// own. The segments are found again at every fit, against the fitted slope (see SegmentedLine),
// starting from the step most seconds share (not the median step: losses can be most seconds).
// The first SKIP_SECONDS of each series are left out (the start-up gain: 12 ms with a 10 s time
// constant in the simulation; 15 s left ~29 ppm of it in the first figure, 30 s leaves ~6).
// C's timestamps can be wrong for a while where the render is not: after our output stalled ~11 ms
// on the bench rig (a client joining the sound server), getOutputTimestamp's context time fell
// 30–39 ms and came back over ~20 s, while the render count stepped down once; the latency the
// timestamp claims (the next render's time at the speaker − now) went from 7.5 ms to 47 and back.
// Fitted as slope, that tail read 83 ppm for an output at 61 and showed −55 for a drift of −33
// (docs/BENCHMARKS.md, "Where the drift outliers come from"). So the worker passes that claimed
// latency with each reading, and a second whose median claim is more than MISDATED_MS off the
// usual one (the median of the last USUAL_SECONDS seconds' medians), or within SETTLED_SECONDS
// after such a second, gives C no point: that join's C then read 65.9 ppm, against 75.5 fitted on
// every second, the render count's 61.3 and the speaker sink's 62.7. A clean second's median
// claim stays within 3 ms of the usual one on the rig; where clean claims scatter more (a busy
// machine), the bound widens with them. The render count itself is not the series: it moves in
// bursts of 10.7 ms, and its per-second points scatter past STEP_MS.
// What it assumes: the two machines' wall clocks tick at the same rate (one machine; or clocks
// disciplined by NTP, which agree within about a ppm). A computer whose clock is off by tens of
// ppm adds that to the figure; the playout rate does not depend on this assumption.

import { QUANTUM_MS } from '../src/shared/constants.ts';
import { seqDiff } from '../src/shared/seq.ts';

/** Seconds of a stream left out at its start (the start-up ramp of the render position). */
export const SKIP_SECONDS = 30;
/** Seconds of points before a figure is given; the window kept (~4 min). */
export const MIN_SECONDS = 60;
export const WINDOW_SECONDS = 240;
/** A point this far off the trend from the one before starts a new segment (ms): less than a quantum (2.67 ms). */
export const STEP_MS = 1.5;
/**
 * Width of the band of neighbouring slopes the first trend is taken from (ms per ms: 1 ms a
 * second). Clean seconds step alike within the per-second scatter (0.4 ms at the 90th percentile
 * on the bench rig); the band holds them, and few losses.
 */
const TREND_BAND = 1e-3;
/** A second whose median claimed latency is this far off the usual one is misdated (ms; clean seconds on the rig: within 3). */
export const MISDATED_MS = 3;
/** …or this many times the usual claims' median absolute deviation, where that is more (the rig's: 0.3–0.5 ms, 0.9 in the stall join). */
const MISDATED_SPREAD = 4;
/**
 * Seconds after a misdated one that give C no point either: the rig's timestamps kept coming back
 * (0.85 ms over 15 s) after their claims looked right again; 15 s left the stall join's C at 65.9
 * ppm, 6 s at 75.5, as high as with no second left out.
 */
export const SETTLED_SECONDS = 15;
/** Seconds of claimed-latency medians the usual one is the median of (a misdating lasts ~20 s). */
const USUAL_SECONDS = 60;
/** Fewest seconds of claims before any second is judged. */
const USUAL_MIN = 10;
/** Claimed latencies kept per second (the page reads the output clock 20 times a second). */
const CLAIMS_PER_SECOND = 64;
/** Largest ratio reported (±4000 ppm: sound cards stay within ~100, timer-driven fake devices ~1000). */
const MAX_DRIFT = 0.004;

/**
 * Points (t, v) in time order, the last `capacity` kept, fitted as segments that share one slope.
 * The segments are found at each fit: the trend starts as the slope most neighbouring points share
 * (the drift moves every second's point alike; a loss moves one, by any amount, and losses can be
 * most of the seconds: 32 of 59 in a CI run), and a point more than STEP_MS off the trend
 * from the one before starts a new segment. A jump inside a second splits between the steps into
 * and out of its point (a 2.7 ms loss mid-second: 1.3 and 1.3 ms); when two steps in a row are
 * together STEP_MS off, the point between them is a segment of its own.
 */
export class SegmentedLine {
  private readonly t: Float64Array;
  private readonly v: Float64Array;
  /** Scratch for a fit: the slopes between neighbours (sorted for the densest band) and each point's segment. */
  private readonly slopes: Float64Array;
  private readonly seg: Int32Array;
  private next = 0;
  length = 0;

  constructor(private readonly capacity: number) {
    this.t = new Float64Array(capacity);
    this.v = new Float64Array(capacity);
    this.slopes = new Float64Array(capacity);
    this.seg = new Int32Array(capacity);
  }

  /** t of the oldest point kept and of the newest. */
  span(): number {
    return this.length < 2 ? 0 : this.t[this.at(this.length - 1)]! - this.t[this.at(0)]!;
  }

  push(t: number, v: number): void {
    const i = this.next;
    this.t[i] = t;
    this.v[i] = v;
    this.next = (i + 1) % this.capacity;
    if (this.length < this.capacity) this.length++;
  }

  clear(): void {
    this.length = 0;
    this.next = 0;
  }

  /** Index of the k-th point kept, oldest first. */
  private at(k: number): number {
    return (this.next - this.length + k + 2 * this.capacity) % this.capacity;
  }

  /**
   * The trend to judge steps against first: the densest band of neighbouring slopes, TREND_BAND
   * wide, the higher one on a tie, and the median inside it (0 with fewer than two points). Not
   * the median of them all: losses only ever pull a point down, and on a loaded machine they can
   * be most of the seconds (32 of 59 in a CI run: the median step was −0.77 ms where the clean
   * ones read +1.0, and the fit settled at −838 ppm for a sender 1000 ppm fast). The clean seconds
   * all step alike; losses spread over every size.
   */
  private startTrend(): number {
    const n = this.length;
    if (n < 2) return 0;
    const sl = this.slopes;
    for (let k = 1; k < n; k++) sl[k - 1] = (this.v[this.at(k)]! - this.v[this.at(k - 1)]!) / (this.t[this.at(k)]! - this.t[this.at(k - 1)]!);
    const m = n - 1;
    const sorted = sl.subarray(0, m).sort();
    let best = 0;
    let bestCount = 0;
    for (let i = 0, j = 0; i < m; i++) {
      while (sorted[j]! < sorted[i]! - TREND_BAND) j++;
      // [j, i] is the band ending at sorted[i]; ≥ keeps the higher band on a tie.
      if (i - j + 1 >= bestCount) {
        bestCount = i - j + 1;
        best = j;
      }
    }
    return sorted[best + Math.floor(bestCount / 2)]!;
  }

  /** Assigns each point its segment (this.seg, by k), judging each step against `trend`. */
  private segment(trend: number): void {
    const n = this.length;
    if (n === 0) return;
    let id = 0;
    let lastOff = 0;
    this.seg[0] = 0;
    for (let k = 1; k < n; k++) {
      const off = this.v[this.at(k)]! - this.v[this.at(k - 1)]! - trend * (this.t[this.at(k)]! - this.t[this.at(k - 1)]!);
      if (Math.abs(off) > STEP_MS) {
        this.seg[k] = ++id;
        lastOff = 0; // the jump is behind: the next step is judged on its own
      } else if (Math.abs(off + lastOff) > STEP_MS) {
        this.seg[k - 1] = ++id; // half way between two levels: alone
        this.seg[k] = ++id;
        lastOff = 0;
      } else {
        this.seg[k] = id;
        lastOff = off;
      }
    }
  }

  /**
   * The common slope of the segments (units of v per unit of t), or null with no spread in t.
   * The first trend is only a guess (the band's median; losses right at its edge tilt it), so the
   * segments are found again against the slope they give, twice.
   */
  slope(): number | null {
    let trend: number | null = this.startTrend();
    for (let pass = 0; pass < 3 && trend !== null; pass++) {
      this.segment(trend);
      trend = this.fit();
    }
    return trend;
  }

  /** The least-squares slope common to the segments as this.seg has them. */
  private fit(): number | null {
    let sxy = 0;
    let sxx = 0;
    // A segment is a run of equal ids. Two passes per segment (means, then deviations) keep the
    // sums exact however long the stream has run.
    let k0 = 0;
    while (k0 < this.length) {
      const id = this.seg[k0]!;
      let k1 = k0;
      let st = 0;
      let sv = 0;
      while (k1 < this.length && this.seg[k1] === id) {
        st += this.t[this.at(k1)]!;
        sv += this.v[this.at(k1)]!;
        k1++;
      }
      const n = k1 - k0;
      if (n >= 2) {
        const mt = st / n;
        const mv = sv / n;
        for (let k = k0; k < k1; k++) {
          const dt = this.t[this.at(k)]! - mt;
          sxx += dt * dt;
          sxy += dt * (this.v[this.at(k)]! - mv);
        }
      }
      k0 = k1;
    }
    return sxx > 0 ? sxy / sxx : null;
  }
}

/**
 * Readings (t, v) averaged per second of t (ms) into a SegmentedLine: one point per second, at the
 * readings' mean time. `keep` is asked as each second ends, before its point goes in (whether it
 * has one or not): false leaves that point out (OutputClock's misdated seconds).
 */
class SecondMeans {
  readonly line = new SegmentedLine(WINDOW_SECONDS);
  /** The current second (ms, same scale as t) and what it has gathered. */
  private blockStart = NaN;
  private sumT = 0;
  private sumV = 0;
  private n = 0;

  constructor(private readonly keep: (hasPoint: boolean) => boolean = () => true) {}

  /** Time has reached `t`: ends the current second if `t` is past it (the first call starts one). */
  advance(t: number): void {
    if (t < this.blockStart + 1000) return;
    if (this.keep(this.n > 0) && this.n > 0) this.line.push(this.sumT / this.n, this.sumV / this.n);
    this.sumT = this.sumV = this.n = 0;
    this.blockStart = Number.isNaN(this.blockStart) ? t : this.blockStart + 1000 * Math.floor((t - this.blockStart) / 1000);
  }

  add(t: number, v: number): void {
    this.advance(t);
    this.sumT += t;
    this.sumV += v;
    this.n++;
  }

  clear(): void {
    this.line.clear();
    this.blockStart = NaN;
    this.sumT = this.sumV = this.n = 0;
  }
}

/**
 * C: our output device's clock against the wall clock, from the page's readings, one point per
 * second at the fit readings' mean time, none for a misdated second (see the header). One per worker.
 */
export class OutputClock {
  /** Every reading moves the seconds on (its claim counts); only the fit's give points. */
  private readonly seconds = new SecondMeans((hasPoint) => this.endSecond(hasPoint));
  private started = false;
  private context0 = 0;
  private wall0 = 0;
  /** The current second's claims. */
  private readonly claims = new Float64Array(CLAIMS_PER_SECOND);
  private claimCount = 0;
  /** The last USUAL_SECONDS seconds' median claims (circular), and scratch to sort them. */
  private readonly usual = new Float64Array(USUAL_SECONDS);
  private readonly sorted = new Float64Array(USUAL_SECONDS);
  private usualCount = 0;
  private usualNext = 0;
  /** Seconds still to leave out after a misdated one. */
  private settling = 0;
  /** Seconds left out as misdated or settling, since the start (stats, tests). */
  misdatedSeconds = 0;

  /** One point per second kept (ms since the first reading; the output's lead on the wall clock, ms). */
  get line(): SegmentedLine {
    return this.seconds.line;
  }

  /**
   * One reading: the context time (s) being played at wall time `wallMs` (performance.timeOrigin +
   * performanceTime), and the latency it claims: when the next render reaches the speaker by this
   * reading, less the wall time now, ms (NaN where unknown: no second is then judged). `fit`: the
   * reading is one of the fit's (four a second, as it was tuned with); every reading's claim counts.
   */
  add(contextTime: number, wallMs: number, claimedMs = NaN, fit = true): void {
    if (!(contextTime > 0) || !Number.isFinite(wallMs)) return; // not playing yet
    if (!this.started) {
      this.started = true;
      this.context0 = contextTime;
      this.wall0 = wallMs;
    }
    const t = wallMs - this.wall0;
    this.seconds.advance(t);
    if (Number.isFinite(claimedMs) && this.claimCount < CLAIMS_PER_SECOND) this.claims[this.claimCount++] = claimedMs;
    // The first SKIP_SECONDS give no point (the start-up gain), but their claims set the usual one.
    if (fit && t >= SKIP_SECONDS * 1000) this.seconds.add(t, (contextTime - this.context0) * 1000 - t);
  }

  /** The second that just ended: its median claim judged against the usual one; false leaves its point out (misdated). */
  private endSecond(hasPoint: boolean): boolean {
    let misdated = false;
    if (this.claimCount > 0) {
      const median = medianOf(this.claims.subarray(0, this.claimCount));
      if (this.usualCount >= USUAL_MIN) {
        const kept = this.sorted.subarray(0, this.usualCount);
        kept.set(this.usual.subarray(0, this.usualCount));
        const usual = medianOf(kept);
        // Where the clean seconds' claims scatter more (a busy machine), the bound widens with
        // them: MISDATED_SPREAD median absolute deviations.
        for (let k = 0; k < kept.length; k++) kept[k] = Math.abs(kept[k]! - usual);
        const bound = Math.max(MISDATED_MS, MISDATED_SPREAD * medianOf(kept));
        if (Math.abs(median - usual) > bound) misdated = true;
      }
      this.usual[this.usualNext] = median;
      this.usualNext = (this.usualNext + 1) % USUAL_SECONDS;
      if (this.usualCount < USUAL_SECONDS) this.usualCount++;
    }
    if (misdated) this.settling = SETTLED_SECONDS + 1;
    const leftOut = this.settling > 0;
    if (this.settling > 0) this.settling--;
    if (hasPoint && leftOut) this.misdatedSeconds++;
    this.claimCount = 0;
    return !leftOut;
  }

  /** The output clock's rate against the wall clock, minus 1, over the readings kept (null before MIN_SECONDS of them). */
  rate(): number | null {
    return this.line.span() >= MIN_SECONDS * 1000 - 1000 ? this.line.slope() : null;
  }
}

/** The median of `xs` (sorted in place; the upper one of an even count's middle two). */
function medianOf(xs: Float64Array): number {
  xs.sort();
  return xs[xs.length >> 1]!;
}

/** A: one remote sender's samples against its capture timestamps, and the figure shown for it. */
export class ShownDrift {
  private readonly seconds = new SecondMeans();
  private started = false;
  private seq0 = 0;
  /** The last capture stamp (wire u32 µs) and the µs since the first, unwrapped. */
  private captureLast = 0;
  private captureSinceUs = 0;
  private now0 = 0;
  private lastShown: { ppm: number; seconds: number } | null = null;

  /** One data packet arrived: its sequence and capture time (the wire's u32 µs), at our wall clock `nowMs`. */
  add(seq: number, captureUs: number, nowMs: number): void {
    if (!this.started) {
      this.started = true;
      this.seq0 = seq;
      this.captureLast = captureUs;
      this.captureSinceUs = 0;
      this.now0 = nowMs;
    }
    // The stamp wraps every 2^32 µs (71 min): add the signed 32-bit step from the last one.
    this.captureSinceUs += (captureUs - this.captureLast) | 0;
    this.captureLast = captureUs;
    const t = nowMs - this.now0;
    if (t < SKIP_SECONDS * 1000) return;
    // The sender's samples (nominal ms) ahead of its capture stamps (its wall clock, ms).
    this.seconds.add(t, seqDiff(seq, this.seq0) * QUANTUM_MS - this.captureSinceUs / 1000);
  }

  /** A new timeline (resync): sequences jump, so the fit restarts; the last figure stands. */
  reset(): void {
    this.started = false;
    this.seconds.clear();
  }

  /**
   * The figure to show (ppm, + = the sender runs fast against our output) with the seconds of
   * arrivals behind it; null until both it and `output` have MIN_SECONDS.
   */
  shown(output: OutputClock): { ppm: number | null; seconds: number } {
    const seconds = this.seconds.line.length;
    if (seconds >= MIN_SECONDS) {
      const a = this.seconds.line.slope();
      const c = output.rate();
      if (a !== null && c !== null) {
        const drift = Math.max(-MAX_DRIFT, Math.min(MAX_DRIFT, (1 + a) / (1 + c) - 1));
        this.lastShown = { ppm: Math.round(drift * 1e6), seconds };
      }
    }
    return this.lastShown ?? { ppm: null, seconds };
  }
}
