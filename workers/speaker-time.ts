// Network worker: when a context frame of our playback reaches the speaker, on the wall clock. Fed
// by the page's readings of `AudioContext.getOutputTimestamp()` (twenty a second: the context time
// being played at the device and the performance time it is played at, posted as 'output-clock'),
// read at each packet arrival to date that packet's playout at the speaker (the one-way delay,
// PeerStats.oneWayMs).
//
// Why not `outputLatency + baseLatency`? On the bench rig (PulseAudio) the time from a render to
// the speaker is not one figure per join: the output gains 10–15 ms on the wall clock in the first
// ~40 s of a join and sometimes loses a step later (workers/shown-drift.ts), and the render runs in
// bursts of several quanta ahead of the device. The output timestamp follows all of it; the two
// attributes are a fixed guess. docs/MEASUREMENT.md §3, checked by `npm run bench -- --m2e`.
//
// Each reading gives an offset, wall ms − context ms, of the device's clock. Single readings
// scatter by up to a device callback (the browser extrapolates between callbacks), so the offset used is the median of the last READINGS, about
// two seconds: it moves with the device, not with one reading.
//
// A step is followed at once. When this machine stalls, the output resumes later than it was due
// and stays that much later (seen here in headless Chromium: 5 to 29 ms, all processes at once):
// waiting for the median to move would misdate a second of playout, and the metronome (workers/
// metronome-schedule.ts) would click that late. So STEP_READINGS readings in a row that all lie
// beyond the step limit on one side of the median, and within it of each other, replace the kept
// readings. The limit is STEP_SPREADS times the readings' own scatter (the median difference
// between successive readings, over √2: a median absolute deviation where the readings are noise;
// its largest of the last few seconds), at least STEP_MIN_MS: a device whose readings
// scatter widely never steps on its scatter, a steady one steps on a fraction of a quantum. The
// scatter is not measured about the window's median: a device that steps often (headless
// Chromium's output on a loaded machine loses a quantum every half second at times) spreads the
// window over several steps, and a spread measured that way grew past a quantum, so no step was
// followed and the median ran 5 ms behind the device (frames dated 5 ms early: a metronome's
// clicks and a leader's strikes that late, the one-way delay shown that low). Headless Chromium's
// output also drifts a few tens of ppm and steps back a whole quantum every minute or two (seen
// here): a click in the 0.15 s before the step is followed is a quantum off.
//
// An output's first seconds are not dated well by any of this: on the bench rig (PulseAudio) the
// browser's output timestamps ramp by up to 38 ms over the first 5 s and come back in corrections
// every ~1.5 s while the speaker's real timing stands still, or stand still while it moves; the
// one-way delay read up to 30 ms off the truth in the first 10 s. The figure is shown only once
// the output has played OUTPUT_CLOCK_SETTLE_S (`settled`).

import { OUTPUT_CLOCK_SETTLE_S, SAMPLE_RATE } from '../src/shared/constants.ts';
import { medianInPlace } from '../src/shared/median.ts';

/** Readings whose median is used (2.05 s at the page's twenty a second, src/engine/output-clock.ts). */
export const READINGS = 41;
/** Readings in a row beyond the step limit that make a step. */
export const STEP_READINGS = 3;
/** The step limit: this many times the readings' median absolute deviation... */
export const STEP_SPREADS = 4;
/** ...and at least this, ms. */
export const STEP_MIN_MS = 1;
/**
 * Readings before the scatter is measured (a context's first readings scatter widely), and again
 * before steps are followed (about 4 s and 6 s at twenty a second).
 */
export const SCATTER_READINGS = READINGS * 2;
/**
 * The scatter held decays by this factor a reading (to half in about 5 s at twenty a second). Held
 * longer (to half in 14 s), a few seconds of wide scatter (a starved page's readings, while three
 * browsers start on two cores) can hold the step limit above a two-quantum step half a minute
 * later: the step goes unfollowed for a second, and a metronome's clicks come that much late
 * (likely what a rehearsal saw: two clicks 5.2 ms late on a 5.3 ms step). Held only a window (to
 * half in 2 s), a device scattering by ±5 ms stepped on its scatter (unit tests, seed 4).
 */
export const SCATTER_DECAY = 0.993;
/** A reading older than this (ms of wall clock) is not trusted: the page stopped reading (hidden tab, stopped context). */
export const STALE_MS = 5000;

export class SpeakerTime {
  private readonly offsets = new Float64Array(READINGS);
  private readonly sorted = new Float64Array(READINGS);
  private count = 0;
  /** The last READINGS differences between successive readings, ms (absolute); `seen` − 1 were taken. */
  private readonly diffs = new Float64Array(READINGS);
  /** The median offset of the readings kept, ms (wall − context). */
  private offset = 0;
  /** The device's scatter, ms: the median difference of successive readings over √2, held (−1: not known yet). */
  private scatter = -1;
  /** Readings since the context started. */
  private seen = 0;
  /** The newest reading: its context time (s) and its wall time (ms). */
  private lastContext = 0;
  private lastWall = 0;
  /** The readings in a row beyond the step limit, oldest first (a step in the making). */
  private readonly pending = new Float64Array(STEP_READINGS);
  private pendingCount = 0;
  /** Steps followed since the start (stats, tests). */
  steps = 0;
  /** The newest step followed, ms (positive: the output plays later than before, as after a stall). */
  lastStepMs = 0;

  /**
   * Whether the output has played long enough (OUTPUT_CLOCK_SETTLE_S of context time, counted
   * again for a new context) for its dating to be shown as a one-way delay. The dating is used
   * before that too (the metronome, a take's alignment): a rough time beats none there.
   */
  get settled(): boolean {
    return this.count > 0 && this.lastContext >= OUTPUT_CLOCK_SETTLE_S;
  }

  /** The offset in use, ms (wall − context): for the test tap. */
  get offsetMs(): number {
    return this.offset;
  }

  /** One reading: context time `contextTime` (s) is being played at wall time `wallMs` (performance.timeOrigin + performanceTime). */
  add(contextTime: number, wallMs: number): void {
    if (!(contextTime > 0) || !Number.isFinite(contextTime) || !Number.isFinite(wallMs)) return; // not playing yet
    if (this.count > 0 && contextTime < this.lastContext) {
      this.count = this.pendingCount = 0; // a new AudioContext: its time starts again
      this.scatter = -1;
      this.seen = 0;
    }
    const r = wallMs - contextTime * 1000;
    if (this.seen > 0) this.diffs[(this.seen - 1) % READINGS] = Math.abs(r - (this.lastWall - this.lastContext * 1000));
    const before = this.offset;
    this.seen++;
    this.lastContext = contextTime;
    this.lastWall = wallMs;
    const stepped = this.isStep(r);
    if (stepped) {
      // The device moved: keep only the readings since it did.
      for (let i = 0; i < STEP_READINGS; i++) this.offsets[i] = this.pending[i]!;
      this.count = STEP_READINGS;
      this.pendingCount = 0;
      this.steps++;
    } else {
      this.offsets[this.count % READINGS] = r;
      this.count++;
    }
    const n = Math.min(this.count, READINGS);
    const s = this.sorted;
    for (let i = 0; i < n; i++) s[i] = this.offsets[i]!;
    this.offset = medianInPlace(s, n);
    const d = Math.min(this.seen - 1, READINGS);
    for (let i = 0; i < d; i++) s[i] = this.diffs[i]!;
    const spread = d === 0 ? 0 : medianInPlace(s, d) / Math.SQRT2;
    // The device's scatter: the largest spread of late, decaying (a window's spread is itself
    // scattered, and a chance cluster must not make a device with wide scatter look steady).
    if (this.seen >= SCATTER_READINGS) this.scatter = Math.max(spread, this.scatter * SCATTER_DECAY);
    if (stepped) this.lastStepMs = this.offset - before;
  }

  /** Whether reading `r` completes a step (it is then the newest of `pending`). */
  private isStep(r: number): boolean {
    // Until several windows have passed, the device's scatter is not known (a join's first seconds):
    // no step, the median follows.
    if (this.seen < SCATTER_READINGS + READINGS) return false;
    const limit = Math.max(STEP_MIN_MS, STEP_SPREADS * this.scatter);
    const d = r - this.offset;
    if (Math.abs(d) <= limit) {
      this.pendingCount = 0;
      return false;
    }
    // Beyond the limit: it continues the run if on the same side and within the limit of each reading in it.
    let fits = true;
    for (let i = 0; i < this.pendingCount; i++) {
      const p = this.pending[i]!;
      if ((p - this.offset > 0) !== (d > 0) || Math.abs(p - r) > limit) fits = false;
    }
    if (!fits) this.pendingCount = 0;
    this.pending[this.pendingCount++] = r;
    return this.pendingCount === STEP_READINGS;
  }

  /**
   * Wall time (ms) at which context frame `frame` (modulo 2^32, as the playback block stores it)
   * reaches the speaker, or null without a recent reading. `nowMs` is the wall clock now. The
   * frame is placed within ±2^31 frames (12 h) of the newest reading.
   */
  wallOf(frame: number, nowMs: number): number | null {
    if (this.count === 0 || nowMs - this.lastWall > STALE_MS) return null;
    const lastFrame = Math.round(this.lastContext * SAMPLE_RATE);
    const ahead = (frame - lastFrame) | 0; // signed frames from the newest reading, across the 2^32 wrap
    return (lastFrame + ahead) * (1000 / SAMPLE_RATE) + this.offset;
  }

  /**
   * The context frame (not wrapped; fractional) that reaches the speaker at wall time `wallMs`, or
   * null without a recent reading (`nowMs`: the wall clock now). The inverse of wallOf.
   */
  frameOf(wallMs: number, nowMs: number): number | null {
    if (this.count === 0 || nowMs - this.lastWall > STALE_MS) return null;
    return (wallMs - this.offset) * (SAMPLE_RATE / 1000);
  }
}
