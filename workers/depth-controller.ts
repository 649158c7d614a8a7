// Adaptive jitter depth and clock-drift compensation for one remote peer, in the network worker.
// Input: the playback worklet's buffer fill at its low points (the minimum of each 43 ms window,
// in quanta) and the peer's late/underrun count. Output: a target depth (quanta) and a playout
// rate for the worklet's resampler. Pure logic on a caller-supplied clock; unit-tested in Node.
//
// The algorithm (docs/ARCHITECTURE.md, "Adaptive depth and drift"):
// - What "depth" means: the buffer's low point, i.e. how much audio is still queued at the moment
//   the worklet has just taken what it plays. Jitter makes that low point wander; a frame is late
//   when it would have had to go below zero.
// - Depth choice (adaptive): like Jamulus and JackTrip's Regulator, read the jitter off the real
//   trace: how far the low point dips below its running average (the highest of its last three
//   values, so a step that straddles two windows counts whole; the 99th percentile of those dips
//   over the last ~22 s, so a slow trend is not mistaken for jitter), plus one quantum of headroom.
// - Recurring steps: a dip that comes back is covered for ~90 s, not 22. Devices deliver audio in
//   periods, and a sound server driven by a timer lets a stream run ahead of the wall clock and
//   then skip a period. On the bench rig (PulseAudio) the sender's 1024-frame capture buffers
//   reach its worker about 1000 ppm ahead of the wall clock for ~22 s, then one comes 21.3 ms
//   late: the receiver's low point steps down by 8-9 quanta, again every ~22 s, and the rate
//   refills it in ~4 s; the level also steps up by about as much at other moments, which the
//   trim rule used to cut, so the next step down ran dry. The steps are as regular as the
//   devices, so the depth must hold one even after the 22 s history has forgotten the last: the
//   need also covers the second-largest of the per-second largest dips of the last ~90 s (two
//   separate seconds must have seen it, so one outage does not hold the depth up for 90 s), and
//   trimAbove() tells the worklet to leave a step up that size to the rate.
// - Slow lateness: on that rig the low point's step down is the arrivals' lag (arrival time minus
//   capture stamp) stepping up, after ~22 s of it shrinking by ~1 ms/s. Holding the low point at
//   the target through the ramp makes the rate follow it (the sound plays ~1 ms/s earlier, then
//   the refill after the step moves it ~21 ms later again): the mouth-to-ear delay wanders by the
//   whole step, and on average sits half of it above what the step requires. So, at any depth,
//   automatic or manual, while the arrivals come later than at their earliest of the last ~90 s
//   (workers/arrival-lag.ts: the last ~200 ms against half-second means, so network jitter
//   averages out), the level held
//   may sit that much below the target (less RELIEF_MARGIN), up to the recurring dip (relief()): the step has already
//   happened and is not refilled, and the ramp fills the buffer back at the rate of the clocks.
//   The delay from capture to playout then holds still at what the step needs. A manual depth
//   gets it too: the level just before the next step is still the depth chosen, so the relief
//   takes nothing from the protection the musician chose, only the ~half step of delay the
//   refill would add (the m2e sweep's smallest clean manual depth, 10, sat 11 ms above the
//   automatic depth's 10-11 without it; in bench/device-rhythm.ts a manual 10 now plays exactly
//   as the automatic depth that settles at 10).
// - The step's eve: by that rule the level sits RELIEF_MARGIN over target − excess through the
//   ramp, and the delay holds still there; held at the target itself in the ramp's last quantum
//   of excess, it met the step a quantum lower than the delay it played at, and the delay fell
//   by that quantum only for the ramp's last ~2.7 s. So where the lag steps (a recurring dip, or
//   the start-up's burst, with the lag's range at least half of it), the relief goes on below
//   zero, to −RELIEF_MARGIN at the bottom: the level meets the step a quantum above the target.
//   On the rig (four traced 150 s joins each way, 2026-11-29, bench/m2e/segments/playout-trace.ts)
//   the median lowest low point after a step rose from 3.0 to 3.6 quanta, and the steps that came
//   within 1.5 quanta of empty went from 4 of 24 to 3 of 24 (the settled underruns of the m2e runs
//   before were such steps); in bench/device-rhythm.ts the settled lowest low point rose 0.3-0.8
//   quanta and the delay 0.3-0.4 ms (the target is unchanged). At an automatic depth, where the
//   step is TRIM_EXCESS quanta or more, it goes on twice as steeply, to −EVE_QUANTA (2): the
//   settled underruns left came in the ~2 s after a step, a render period's dip (4 quanta) on a
//   level 3.8-5.3 up; in bench/device-rhythm.ts the step's bottom rose 3.8 -> 4.8 quanta for
//   0.2-0.4 ms more delay (STEP_HEADROOM + 1 would cost 2.7 ms at every moment); on the rig
//   (six traced joins, 31 steps, bench/m2e/segments/step-bottoms.ts) the median bottom rose from
//   3.70 to 4.37 quanta and none ran dry (10 of 141 before). Not at a manual
//   depth or for a smaller step: the worklet trims above TRIM_EXCESS there, and target + 2 plus
//   the render phase's rise crossed it (a manual 10 trimmed 4 quanta in simulation).
// - What the relief leaves: the level held after a step still covers the ordinary dips, the
//   largest that two separate seconds of the last ~90 s saw outside the step
//   (RecurringDips.ordinary(); until 2026-11-29 the largest of nine in ten seconds, which left
//   out the render's worth that comes in fewer, see "Bursts against renders"). On the rig our own
//   output takes a whole render period (4 quanta) early in about one second in four; the relief
//   took the level to ~2.5 quanta after each step, and such a dip in the seconds after ran it dry
//   (3 of 4 settled underrun events in four traced joins, bench/m2e/segments/playout-trace.ts).
// - Late hand-overs: it also covers the largest dip of the last ~90 s that refilled at once
//   (workers/late-hand-overs.ts), from the first one seen. On the rig the sender's microphone
//   buffers now and then reach its worker 12-27 ms late with the next on time (none in some joins,
//   several a minute in others, docs/BENCHMARKS.md "Late hand-overs"): a dip as large as the step,
//   so ordinary() leaves it out, and right after a step, the relief holding the level down, one
//   ran the buffer dry. In bench/device-rhythm.ts at 2 a minute: 6 glitches in 6 joins' last
//   minute before, none with it, for ~3 ms more delay while they come and none where none does.
// - Bursts against renders, left alone: on the rig the level also rises by 2-4 quanta about every
//   11 s, until the rate drains it. This was read as our render pulling late; a probe of the
//   receiver's render count and of the arrivals by sequence (bench/m2e/segments/main.ts phase,
//   2026-11-29) saw both on their lines. What moves is the phase: the sender's 8-quantum buffers
//   arrive ~1 ms/s earlier along the ramp, our output renders 4 quanta at a time (10.7 ms), and
//   when a delivery slides from just after a render to just before it, every window's low point
//   rises by up to those 4 quanta with the delay the same. Near that crossing the phase can go
//   back (the step, two renders' worth give or take a ms; or our render's own jitter), and a
//   drained rise is then missing: the buffer falls ~12 quanta where the step alone is 8, or a
//   render period's dip follows in the seconds after it. What the relief leaves covers that dip
//   (the largest ordinary dip seen twice in ~90 s, above). Leaving an excess alone at the step's
//   eve (relief below zero) was tried on 2026-11-29 and not kept: in four traced 150 s joins the
//   rises it kept were drained after the step instead, and the phase went back there (5 seconds
//   within 1.5 quanta of empty against 3 before, the mean level 0.4 quanta higher). Draining an
//   excess only once it had lasted ~2 s was tried before (06b58fe) and taken out: the m2e run
//   with it had 87-215 trimmed quanta in three of five settled joins (none in the run before),
//   the worklet cutting what the rate left (docs/BENCHMARKS.md).
// - Like SonoBus's auto mode, grow at once on a glitch (a late frame or an underrun) and shrink
//   only after 30 s without one (longer than the ~22 s between such steps), one quantum per 2 s.
// - Start-up: after the first ~2 s of a stream without a glitch the target jumps to what that
//   history needs (up at once; down by at most TRIM_EXCESS, which the rate drains without a trim),
//   so every join settles near the same depth within seconds instead of walking down from the
//   default one quantum per 2 s. For the first 45 s what it needs includes one burst of arrivals
//   handed over late (workers/arrival-bursts.ts): a sender whose device hands its audio over in
//   periods sends each period at once, and a device that hands one over late takes that much out
//   of the buffer at once, before any history can show it. On the rig every join met the rhythm's
//   first late buffer at a depth of 4-6 and underran 3-6 quanta (the bench's C default, 10-16
//   underruns in 5 × 13 s); with the floor, none in simulation unless it comes in the first ~2 s.
//   The cost is delay until the first late buffer has come: the level is then the whole target,
//   and the arrivals, on their ramp, are at their earliest so far (no relief); with no rhythm, the
//   usual shrinking takes it down after 45 s. From the first late buffer on, the burst stands in
//   for the recurring step in the relief too (startStep()), so the level is not refilled to the
//   whole floor after it: in simulation a join whose first late buffer came 5-13 s in played
//   within a millisecond of its settled delay over 3-23 s, where refilled it was 3.6-5.6 ms above.
//   Before the first late buffer, one case is known: on the rig every stream began at the top of
//   the sender's delivery ramp (the sender's microphone opened with the join: the lag at its
//   highest in the first second, falling ~1 ms/s, the late buffer ~21 s in; three traced joins,
//   docs/BENCHMARKS.md), so the first ~20 s played about half a burst above the settled delay. A
//   stream that began within FRESH_MS of the sender's microphone (MemberState.micSince) and whose
//   lag has done nothing but fall since is taken to have begun at the top: the ramp ends a burst
//   lower, and the relief is the burst less the fall so far (startRamp()). A passing bump in the
//   first 8 s (5 of 24 traced joins rose 2-10 quanta for 3-6 s, then fell back onto the ramp) is
//   let by: the fall is read after it (ArrivalLag.fallFromStart()), and so is a staircase fall
//   (1 join in 8: drops every ~3 s, rising below the highs before them in between). Not for a stream met
//   mid-ramp (a member joining a room whose others' microphones have run for minutes): taken for
//   the top there, the relief at the late buffer was too much by up to a burst, and in simulation
//   joins 12-16 s into the rhythm underran 1-3 quanta at it.
// - Rate: the measured clock ratio (workers/drift-estimator.ts; over ~22 s, then over ~4 min once
//   that has 60 s; each glitch and trim breaks its line, so a device's lost time is not read as
//   drift; until the long one has its 60 s, the ~22 s slope of readings dated back to capture by
//   their lag, which a sound server's delivery ramp does not tilt) fed forward beyond 5 ppm (less than that the proportional term carries, so clocks
//   that agree play at exactly 1, bit-exact), plus a proportional
//   term that holds the median low point of the last half second at the target (less the relief) and moves the
//   buffer to a new depth by playing up to 0.5 % faster or slower, never by skipping or holding;
//   while the level is under that and the relief falls as a ramp, the fall too (reliefRamp()).
//   (An integral term would settle at the ratio too, but it also winds up on every depth change,
//   and what it then reports as drift is the controller's own transient.)

import { MAX_DEPTH, MAX_RATE_DEVIATION, MIN_DEPTH, QUANTUM_MS, TRIM_EXCESS, clampDepth } from '../src/shared/constants.ts';
import { ArrivalBursts } from './arrival-bursts.ts';
import { ArrivalLag } from './arrival-lag.ts';
import { CONTROL_WINDOW, DriftEstimator, LONG_WINDOW } from './drift-estimator.ts';
import { LateHandOvers } from './late-hand-overs.ts';
import { RecurringDips } from './recurring-dips.ts';

/** Fill windows remembered (43 ms each: ~22 s). */
const HISTORY = 512;
/** Windows in the recent median the rate controller holds at the target (~0.5 s). */
const RECENT = 12;
/** Quantile of the long history the depth must cover. */
const LOW_QUANTILE = 0.01;
const HEADROOM = 1;
/**
 * Headroom where a step recurs (and for the start-up's burst, which stands in for one): the bottom
 * of the step must also cover what our output takes in the second or two the rate needs to refill
 * it. On the rig (three traced 150 s joins, 2026-11-27, bench/m2e/segments/playout-trace.ts) 6 of
 * 16 steps fell 0.7-2.4 quanta further within ~2 s (our output rendering early on top of the
 * step: per-second dips of 2.3-2.9 quanta at the 75th percentile); at HEADROOM alone 3 of those 6
 * ran dry and the other 3 bottomed out 0.2-0.5 quanta above empty. One more quantum covers the
 * 75th percentile of those dips; the 90th (3.6-3.7, a whole render period) would cost 2.67 ms
 * more at every moment. Traced again with it: 18 steps, none under 0.9 quanta, none dry.
 */
const STEP_HEADROOM = 2;
const SHRINK_AFTER_CLEAN_MS = 30_000;
const SHRINK_STEP_MS = 2_000;
/** At most one growth step per this interval: a long outage must not run the depth to the maximum. */
const GROW_STEP_MS = 500;
/** Most one glitch may grow the depth at once (one long device period): one outage is not a rhythm. */
const GLITCH_GROWTH = 8;
/**
 * Quanta of the lag's excess not given as relief: the recent mean sees a step up to ~200 ms late,
 * and the stamps carry ±2 ms; in simulation (bench/device-rhythm.ts) no relief margin left an
 * underrun a minute in 6 of 8 seeds, 0.5 or 1 none in 300 s.
 */
const RELIEF_MARGIN = 1;
/**
 * Quanta over the target the level meets a step with ("The step's eve" in the header): the relief
 * goes below zero over the ramp's last RELIEF_MARGIN quanta of excess, down to −EVE_QUANTA.
 */
const EVE_QUANTA = 2;
/** Rate per quantum of depth error (1 quantum off → 0.1 % → corrected in ~3 s). */
const KP = 0.001;
/**
 * Extra rate per quantum of depth error beyond FAR_ERROR (after the dead band): a level that far
 * off for half a second is a step (a device stall's excess, a depth change), not jitter, and at KP
 * alone it took 10-12 s to drain the 2-3 quanta a stall left (a loaded run: the median held level
 * of 30 s sat 1.2-1.3 quanta over a manual 8). With it, ~3 s; near the target the rate stays as
 * gentle as before (the clamp, MAX_RATE_DEVIATION = 0.5 %, is 8.6 cents).
 */
const KP_FAR = 0.002;
const FAR_ERROR = 1;
/** Depth error (quanta) treated as zero while the level rests (see STEERED). */
const DEAD_BAND = 0.5;
/**
 * Once the level has left the dead band, the rate steers it back to within this much of the target
 * before it rests again (hysteresis), not just to the band's edge. Without it, drift that the feed
 * forward misses (a device that loses time, a clock its estimate has not caught yet) parks the
 * level at the edge plus what the proportional term needs to carry it: a CI run of
 * tests/e2e/truth.spec.ts (a sender 1000 ppm fast against a fake output that loses time) held a
 * manual 8 at 8.7 between stalls, and with the stalls' excess the median of 30 s was 9.14. Clocks
 * that agree still rest inside the band at exactly 1 (bit-exact).
 */
const STEERED = 0.1;
/**
 * Drift below this is not fed forward (and above it, only the excess). Clocks that agree (two
 * browsers on one machine, or on one sound card) then play at exactly 1 while the level is inside
 * the dead band, and the worklet plays the sender's samples verbatim (a take's heard tracks too)
 * instead of resampling by the estimate's noise for ever. What stays under the floor the
 * proportional term carries: at KP, 0.005 quantum of held level.
 */
const FEED_FORWARD_FLOOR = 5e-6;

/** The drift the rate feeds forward: the estimate less the floor (continuous, 0 within it). */
function feedForward(drift: number): number {
  return Math.sign(drift) * Math.max(0, Math.abs(drift) - FEED_FORWARD_FLOOR);
}
/**
 * The relief's slope is measured over this many updates (~1 s), and fed forward only while it is
 * a ramp: a fall slower than RAMP_LIMIT quanta a second (a step, the relief's rise at the rhythm's
 * late buffer or its fall at an outage's end, is left to the proportional term).
 */
const SLOPE_UPDATES = 10;
const RAMP_LIMIT = 1;
const QUANTA_PER_SECOND = 1000 / QUANTUM_MS;
/** How long a timeline break stays inside the quick drift window (its blocks are ~1 s of arrivals each). */
const QUICK_WINDOW_MS = (CONTROL_WINDOW.blocks + 1) * 1000;
/**
 * How long after a (re)start the depth covers one burst of arrivals handed over late (see
 * "Start-up" in the header): until a step that comes every ~22 s (the rig's) has been seen twice,
 * and so recurs, or its first sighting is still within the 22 s history when the second comes.
 * In bench/device-rhythm.ts, at rhythms of 21.3-23 s, 45 s left 5 glitches in 30-90 s where the
 * floor at the jump alone left 11 (the same as without it).
 */
const START_FLOOR_MS = 45_000;
/** How far (quanta) the lag must have fallen since the stream began before startRamp() reads it as a ramp (~1.3 s of the rig's). */
const RAMP_EVIDENCE = 0.5;
/**
 * A stream whose first packet came within this long (ms) of the sender's microphone opening (its
 * MemberState.micSince) began with the sender's capture, at the top of its ramp if it has one.
 */
const FRESH_MS = 5_000;
/** Clean windows after a (re)start before the target jumps to the measured need (~2 s). */
const SETTLE_WINDOWS = 46;
/** Running-average gain per window for the dip measurement (time constant ≈ 10 windows = 0.4 s). */
const AVERAGE_GAIN = 0.1;
/**
 * A dip is measured from the highest of the running averages of the last this many windows: a
 * late burst can land across a window boundary, and against the average of one window before the
 * second part of the step would already be partly absorbed (on the rig an 8.3-quantum step read 7).
 */
const AVERAGE_LAG = 3;

export class DepthController {
  adaptive: boolean;
  private manual: number;
  /** Current target depth (the buffer's low point), quanta. */
  target: number;
  /** Rate for the resampler (1 ± MAX_RATE_DEVIATION). */
  rate = 1;
  /** The sender's clock relative to ours, minus 1, as last measured (kept across a resync: same clocks). */
  drift = 0;
  private readonly clocks = new DriftEstimator();
  /** The same measurement over ~4 min (drift-estimator.ts says why two; the figure people see is shown-drift.ts). */
  private readonly longClocks = new DriftEstimator(LONG_WINDOW);
  /**
   * The quick measurement with each arrival dated back to its capture by its lag: the sender's
   * clock against ours without the arrivals' own timing (see update(), where a step recurs).
   */
  private readonly stampedClocks = new DriftEstimator();
  /** The start-up jump to the measured need is still to come (see the header). */
  private settling = true;
  private readonly lows = new Float32Array(HISTORY);
  /** How far each window's low point fell below the running average of low points (detrended jitter). */
  private readonly dips = new Float32Array(HISTORY);
  private average = NaN;
  /** The running average before each of the last AVERAGE_LAG windows (ring). */
  private readonly pastAverages = new Float64Array(AVERAGE_LAG);
  private pastAt = 0;
  private readonly scratch = new Float32Array(HISTORY);
  private count = 0;
  private next = 0;
  /** Dips that come back (the devices' rhythm, see the header). */
  private readonly recurringDips = new RecurringDips();
  /** Dips that refill at once (buffers handed over late, see "Late hand-overs" in the header). */
  private readonly handOvers = new LateHandOvers();
  /** Arrival lag against capture stamps (see "Slow lateness" in the header). */
  private readonly lag = new ArrivalLag();
  /** How the arrivals come in bursts (see "Start-up" in the header). */
  private readonly bursts = new ArrivalBursts();
  /** The first update since the start or the last reset (the start-up floor's clock). */
  private startMs = NaN;
  /**
   * When the sender's microphone stream began (wall clock, ms: MemberState.micSince; NaN where its
   * app does not say), and the first arrival since the start or the last reset (the wall clock of
   * onArrival's atMs). See startRamp().
   */
  micSinceMs = NaN;
  private firstArrivalMs = NaN;
  private lastGlitchMs = -Infinity;
  private lastShrinkMs = -Infinity;
  private lastGrowMs = -Infinity;
  private lastGlitches = -1;
  /** The worklet's trimmed-quanta total at the last window (see onWindow). */
  private trimmedTotal = 0;
  /** The relief and the time at each of the last SLOPE_UPDATES + 1 updates (ring): its slope. */
  private readonly reliefs = new Float64Array(SLOPE_UPDATES + 1);
  private readonly reliefTimes = new Float64Array(SLOPE_UPDATES + 1).fill(NaN);
  private reliefAt = 0;
  /** When the drift estimators' lines were last broken (a glitch or a trim), and the last update's time. */
  private lastBreakMs = -Infinity;
  private lastNowMs = 0;
  /** The level left the dead band on this side (+1 over, −1 under) and is being steered back (0: resting). */
  private steering = 0;

  constructor(depth: number, adaptive: boolean) {
    this.manual = clampDepth(depth);
    this.target = this.manual;
    this.adaptive = adaptive;
  }

  setDepth(depth: number, adaptive: boolean): void {
    this.manual = clampDepth(depth);
    this.adaptive = adaptive;
    if (!adaptive) this.target = this.manual;
  }

  /**
   * One fill window's low point, quanta (negative: the buffer ran dry in that window), with the
   * worklet's trimmed-quanta total as it stood when the window closed. A trim steps the level down
   * on purpose: shift the history by the same amount so the step is not read as a dip (jitter),
   * nor the old level as an excess still to drain.
   */
  onWindow(lowQuanta: number, trimmedTotal = this.trimmedTotal): void {
    const shift = trimmedTotal - this.trimmedTotal;
    this.trimmedTotal = trimmedTotal;
    if (shift > 0) {
      // The worklet trimmed an excess: where our output stalled, if it did (drift-estimator.ts).
      this.clocks.breakTimeline();
      this.longClocks.breakTimeline();
      this.stampedClocks.breakTimeline();
      this.lastBreakMs = this.lastNowMs;
    }
    if (shift > 0 && this.count > 0) {
      this.average -= shift;
      for (let i = 0; i < AVERAGE_LAG; i++) this.pastAverages[i] = this.pastAverages[i]! - shift;
      for (let i = 0; i < this.count; i++) {
        const at = (this.next - 1 - i + HISTORY) % HISTORY;
        this.lows[at] = this.lows[at]! - shift;
      }
    }
    if (Number.isNaN(this.average)) {
      this.average = lowQuanta;
      this.pastAverages.fill(lowQuanta);
    }
    const dip = this.reference() - lowQuanta;
    this.pastAverages[this.pastAt] = this.average;
    this.pastAt = (this.pastAt + 1) % AVERAGE_LAG;
    this.dips[this.next] = dip;
    this.recurringDips.onWindow(dip);
    this.handOvers.onWindow(lowQuanta);
    this.average += (lowQuanta - this.average) * AVERAGE_GAIN;
    this.lows[this.next] = lowQuanta;
    this.next = (this.next + 1) % HISTORY;
    if (this.count < HISTORY) this.count++;
  }

  /** The level a dip is measured from: the highest of the running average and its last values. */
  private reference(): number {
    let r = this.average;
    for (let i = 0; i < AVERAGE_LAG; i++) if (this.pastAverages[i]! > r) r = this.pastAverages[i]!;
    return Number.isNaN(r) ? 0 : r;
  }

  /**
   * A data packet arrived (its sequence), with the quanta our output has rendered so far: the
   * drift measurement; its lag (as onLag), if known, for the stamped one; and its arrival time
   * (wall clock, ms since the epoch, as micSinceMs), if known, for the bursts the start-up floor
   * covers and the start-up's ramp.
   */
  onArrival(seq: number, renderedQuanta: number, lagQuanta = NaN, atMs = NaN): void {
    if (Number.isFinite(atMs)) {
      this.bursts.add(atMs);
      if (Number.isNaN(this.firstArrivalMs)) this.firstArrivalMs = atMs;
    }
    this.clocks.add(seq, renderedQuanta);
    this.longClocks.add(seq, renderedQuanta);
    if (Number.isFinite(lagQuanta)) this.stampedClocks.add(seq, renderedQuanta, lagQuanta);
  }

  /** A data packet's lag: its arrival time minus its capture stamp, quanta (wall clocks; any offset cancels). */
  onLag(quanta: number): void {
    this.lag.add(quanta);
  }

  /**
   * How far below the target the held level may sit now (quanta): how much later than at their
   * earliest in ~90 s the arrivals come, up to the dip that recurs, less RELIEF_MARGIN. At a
   * manual depth too: the level before the next step is still that depth, or a margin above it.
   * Negative (at least −RELIEF_MARGIN; −EVE_QUANTA at an automatic depth whose step is
   * TRIM_EXCESS or more) at the bottom of a ramp whose lag steps: the level is held that much above
   * the target ("The step's eve" in the header).
   */
  relief(): number {
    const r = Math.max(this.recurring(), this.startStep());
    const relief = Math.min(r, Math.max(this.lag.excess(), this.startRamp())) - RELIEF_MARGIN;
    // Where the lag steps, the margin carries on to the ramp's bottom, above the target ("The
    // step's eve" in the header): down to −RELIEF_MARGIN, since the excess is never negative;
    // at an automatic depth, down to −EVE_QUANTA where a step that size sits over the target untrimmed.
    if (relief < 0 && this.lagSteps(r)) return this.adaptive && r >= TRIM_EXCESS ? relief * (EVE_QUANTA / RELIEF_MARGIN) : relief;
    if (!(relief > 0)) return 0;
    // What is left must still cover the ordinary dips (everything but the step itself).
    const keep = Math.max(this.recurringDips.ordinary(r - 1), this.handOvers.value()) + DEAD_BAND + HEADROOM;
    return Math.max(0, Math.min(relief, this.target - keep));
  }

  /**
   * Forget the history (a resync starts a new timeline; what led to it is an outage, not the
   * devices' rhythm, so the recurring-dip memory goes too). The drift estimate is kept: same clocks.
   */
  reset(): void {
    this.count = 0;
    this.recurringDips.clear();
    this.handOvers.clear();
    this.lag.clear();
    this.next = 0;
    this.average = NaN;
    this.clocks.reset();
    this.longClocks.reset();
    this.stampedClocks.reset();
    this.reliefTimes.fill(NaN);
    this.bursts.clear();
    this.startMs = NaN;
    this.firstArrivalMs = NaN;
    this.settling = true;
    this.steering = 0;
  }

  /** The q-quantile of the last `n` entries of `series`. */
  private quantile(series: Float32Array, n: number, q: number): number {
    const s = this.scratch.subarray(0, n);
    for (let i = 0; i < n; i++) s[i] = series[(this.next - 1 - i + HISTORY) % HISTORY]!;
    s.sort();
    return s[Math.min(n - 1, Math.max(0, Math.floor(q * n)))]!;
  }

  /** The level the rate holds at the target: the median low point of the last ~0.5 s (quanta). */
  held(): number {
    return this.count === 0 ? 0 : this.quantile(this.lows, Math.min(this.count, RECENT), 0.5);
  }

  /**
   * How far the low point dips below its running average (99th percentile over the long window):
   * the depth the jitter itself needs. Measured against the running average rather than a fixed
   * level so that a slow trend (drift, a depth change in progress) does not count as jitter.
   */
  spread(): number {
    if (this.count < RECENT) return 0;
    return Math.max(0, this.quantile(this.dips, this.count, 1 - LOW_QUANTILE));
  }

  /** The depth one burst of arrivals handed over late needs, as a recurring dip of that size would (quanta; 0 before the bursts are known). */
  private burstNeed(): number {
    const b = this.bursts.size();
    return b > 0 ? Math.min(MAX_DEPTH, Math.ceil(b + DEAD_BAND + STEP_HEADROOM)) : 0;
  }

  /**
   * While the start-up floor holds one burst of arrivals handed over late (see "Start-up" in the
   * header), that burst stands in for the recurring step in the relief too (quanta; else 0): once a
   * late buffer has come, the arrivals' lag shows it, and the level may stay down after it as it
   * will once the step has recurred, instead of being refilled to the whole floor and adding half
   * a step of delay on average until the rhythm's second late buffer (~45 s). What it leaves still
   * covers the ordinary seconds' dips (RecurringDips.ordinary: their largest, while few are in).
   */
  private startStep(): number {
    return this.lastNowMs - this.startMs < START_FLOOR_MS ? this.bursts.size() : 0;
  }

  /**
   * The stream began with the sender's microphone and its lag has done nothing but fall since (by
   * RAMP_EVIDENCE quanta or more), while the start-up floor holds: the stream began at the top of
   * its delivery ramp, which ends one burst lower with the late buffer, so the arrivals come later
   * than at the ramp's bottom by the burst less what they have fallen since the microphone opened
   * (quanta; else 0). See "Start-up" in the header.
   */
  private startRamp(): number {
    if (!(this.lastNowMs - this.startMs < START_FLOOR_MS)) return 0;
    const before = this.firstArrivalMs - this.micSinceMs;
    if (!(before < FRESH_MS)) return 0;
    const fall = this.lag.fallFromStart();
    if (!(fall >= RAMP_EVIDENCE)) return 0;
    // The ramp had begun when the microphone opened, before the stream reached us: what it fell
    // in between, at the rate seen since.
    const seconds = (this.lastNowMs - this.startMs) / 1000;
    const fallBefore = seconds > 0 ? (fall / seconds) * (Math.max(0, before) / 1000) : 0;
    return Math.max(0, this.bursts.size() - fall - fallBefore);
  }

  /** A dip of `r` quanta is a step the arrivals' lag took with it: their half-second means span at least half of it. */
  private lagSteps(r: number): boolean {
    return r >= 1 && this.lag.range() >= r / 2;
  }

  /** A dip that recurs (quanta; see RecurringDips). */
  recurring(): number {
    return this.recurringDips.value();
  }

  /**
   * The excess over the target the worklet should leave to the rate instead of trimming
   * (PEER_I32.TRIM_ABOVE): a recurring step up is followed by its step down, so a trim would only
   * cause an underrun later. 0 (the worklet's TRIM_EXCESS) where no step recurs, and always at a
   * manual depth: the musician chose that latency, and a machine stall (its underrun, then its
   * burst) must not leave them minutes above it (a CI stall held a manual 8 at 14, draining by
   * rate alone for 10 s).
   */
  trimAbove(): number {
    if (!this.adaptive) return 0;
    const r = this.recurring();
    return r >= 1 ? Math.min(MAX_DEPTH, Math.ceil(r) + 1) : 0;
  }

  /**
   * The excess over the target the worklet's sustained rule alone leaves to the rate
   * (PEER_I32.SUSTAINED_ABOVE): trimAbove(), and while the start-up floor holds a burst for the
   * recurring step not yet seen (startStep), that burst's step too. In a join's first seconds the
   * level can sit a burst up (the sender's delivery ramp, a passing bump of its delay) before the
   * rhythm's late buffer takes a burst back: trimming it there left the buffer a burst short when
   * that came (bench/device-rhythm.ts: 4 quanta trimmed in a join's first 30 s in 14 of 126
   * simulated joins; on the rig a trim of 4 at a target of 11, ~4 s after a join, and the level
   * at 3.6 quanta a second later). Not the stall trim's floor: a stall's backlog still goes at once.
   */
  sustainedAbove(): number {
    if (!this.adaptive) return 0;
    const s = this.startStep();
    return Math.max(this.trimAbove(), s >= 1 ? Math.min(MAX_DEPTH, Math.ceil(s) + 1) : 0);
  }

  /**
   * Quanta of backlog the worklet is about to trim: by its rule (worklets/peer-playout.ts,
   * watchExcess), a low point more than max(TRIM_EXCESS, sustainedAbove()) quanta over the target,
   * sustained for about 0.3 s, is cut to one quantum over it. So the newest window's excess over
   * target + 1 (in whole quanta, as the worklet counts) when it is over that limit by more than a
   * quantum, else 0. The one-way reports (workers/one-way-reports.ts)
   * take it off: after a stall of this machine the backlog plays for that 0.3 s and is gone before
   * the audio a member sends on the report arrives (a report of it made strikes 10–44 ms early).
   */
  pendingTrim(): number {
    if (this.count === 0) return 0;
    const excess = Math.floor(this.lows[(this.next - 1 + HISTORY) % HISTORY]!) - this.target;
    // One quantum of margin: an excess just over the limit dips back under it now and then, which
    // restarts the worklet's count, and may never be trimmed (drained by the rate instead, over a
    // second or two); predicting its trim then reported up to 16 ms too little for that long.
    return excess > Math.max(TRIM_EXCESS, this.sustainedAbove()) + 1 ? excess - 1 : 0;
  }

  /** About every 100 ms, with the peer's total late + underrun count. */
  update(nowMs: number, glitches: number): void {
    this.lag.tick(nowMs);
    if (Number.isNaN(this.startMs)) this.startMs = nowMs;
    if (this.lastGlitches < 0) this.lastGlitchMs = nowMs; // no shrinking in the first 30 s either
    const newGlitches = this.lastGlitches >= 0 && glitches > this.lastGlitches;
    // The dip behind a glitch: the low point stops at zero when the buffer runs dry (play waits),
    // so what the trace shows is cut off there; each quantum waited or frame late is one more.
    const glitchDip = newGlitches ? this.reference() + (glitches - this.lastGlitches) : 0;
    if (newGlitches) {
      this.recurringDips.note(glitchDip);
      // A glitch is where a device lost time, if one did: not drift (drift-estimator.ts).
      this.clocks.breakTimeline();
      this.longClocks.breakTimeline();
      this.stampedClocks.breakTimeline();
      this.lastBreakMs = nowMs;
    }
    this.lastNowMs = nowMs;
    this.lastGlitches = glitches;
    if (newGlitches) this.settling = false; // a glitch this early: grow as usual, no jump down
    if (this.adaptive && this.count >= RECENT) {
      // A recurring step is met by the level the rate holds, which may rest up to the dead band
      // under the target: its headroom comes on top of that (on the rig a recurring dip read 8.0
      // gave a target of 9, held at 8.8, and the next 8.3-quantum step ran dry; 3 of 5 settled
      // underruns in 6 traced minutes).
      // A recurring dip is a step where the arrivals' lag stepped with it (the level stays at the
      // bottom until the rate refills it: STEP_HEADROOM); a jitter dip refills as the late packets land.
      const r = this.recurring();
      const stepped = this.lagSteps(r);
      const traced = Math.min(MAX_DEPTH, Math.max(MIN_DEPTH, Math.ceil(Math.max(this.spread(), r + DEAD_BAND) + (stepped ? STEP_HEADROOM : HEADROOM))));
      const need = nowMs - this.startMs < START_FLOOR_MS ? Math.max(traced, this.burstNeed()) : traced;
      if (this.settling && this.count >= SETTLE_WINDOWS) {
        // Down by at most TRIM_EXCESS: the rate drains that without the worklet trimming (a glitch);
        // the usual shrinking takes it the rest of the way.
        this.settling = false;
        this.target = Math.max(need, this.burstNeed(), this.target - TRIM_EXCESS);
        this.lastShrinkMs = nowMs;
      } else if (newGlitches) {
        if (nowMs - this.lastGrowMs >= GROW_STEP_MS) {
          // At least one more; as much as that dip needed, but at most GLITCH_GROWTH at once.
          const sized = Math.ceil(glitchDip + HEADROOM);
          this.target = Math.min(MAX_DEPTH, this.target + GLITCH_GROWTH, Math.max(this.target + 1, need + 1, sized));
          this.lastGrowMs = nowMs;
        }
        this.lastGlitchMs = nowMs;
      } else if (need > this.target) {
        this.target = need;
      } else if (this.target > need && nowMs - this.lastGlitchMs >= SHRINK_AFTER_CLEAN_MS && nowMs - this.lastShrinkMs >= SHRINK_STEP_MS) {
        this.target--;
        this.lastShrinkMs = nowMs;
      }
    }
    // The ~4 min estimate once it has 60 s: the quick one wanders by hundreds of ppm on a real
    // device (drift-estimator.ts), and every 100 ppm of error it feeds forward leaves the held
    // level 0.1 quantum off the target (KP); on the rig the level sat 1-2 quanta off.
    const long = this.longClocks.estimate();
    const measured = long ?? this.clocks.estimate();
    if (measured !== null) this.drift = measured;
    // Until the long one has its 60 s, the stamped estimate is fed forward: the quick slope with
    // each reading dated back to the packet's capture by its lag. A sound server's delivery rhythm
    // tilts the quick one: on the rig the arrivals run ~1000 ppm early between the late buffers
    // (a ramp of ~22 s), and a quick window of ramp only (before the first step, or with a glitch
    // at each step breaking its line) read +700 to +1000 ppm. Fed forward, that held the level
    // 1.2-1.5 quanta under the target just before the step, which then ran dry: in three traced
    // joins on 2026-11-27 (bench/m2e/segments/playout-trace.ts) the level reached the first or
    // second step at 8.5-8.6 with a target of 10, and two of those steps underran. The ramp is the
    // arrivals' timing, not the clocks': the packets' lag against their capture stamps shrinks
    // with it, so the stamped slope does not see it, while a sender whose samples do run fast (a
    // timer-driven fake device 1000 ppm off: fed nothing, its level sat 1.3 quanta over a manual
    // 8 in a CI run of tests/e2e/truth.spec.ts) still reads 1000 ppm. What it trusts instead is
    // the two wall clocks ticking together (one machine, or NTP's few ppm; 100 ppm apart would
    // leave the level 0.1 quantum off). Without lags (none yet, or a sender that stamps nothing),
    // the quick estimate, except where a step recurs and a glitch has broken its window: nothing,
    // and the proportional term carries it.
    const rampOnly = this.recurring() >= 1 && nowMs - this.lastBreakMs < QUICK_WINDOW_MS;
    const fed = long ?? this.stampedClocks.estimate() ?? (rampOnly ? 0 : this.drift);
    if (this.count < RECENT / 2) {
      this.rate = 1 + feedForward(fed);
      return;
    }
    // The low point moves in whole-quantum steps as the two clocks' phases slip past each other;
    // a half-quantum dead band keeps the rate from chasing those steps.
    const relief = this.relief();
    const raw = this.quantile(this.lows, Math.min(this.count, RECENT), 0.5) - (this.target - relief);
    // Out of the band: steer back to the target itself; rest again once within STEERED of it or past it.
    if (raw > DEAD_BAND) this.steering = 1;
    else if (raw < -DEAD_BAND) this.steering = -1;
    else if (raw * this.steering <= STEERED) this.steering = 0;
    const error = this.steering !== 0 ? raw : 0;
    // The far term as before the hysteresis: beyond the band and FAR_ERROR more.
    const reach = DEAD_BAND + FAR_ERROR;
    const far = raw > reach ? raw - reach : raw < -reach ? raw + reach : 0;
    // Only while the level is under where it should be: where the arrivals themselves fill the
    // buffer as the lag shrinks (in bench/device-rhythm.ts they do), the level keeps up without it.
    const fall = this.reliefRamp(nowMs, relief);
    const ramp = raw < 0 ? fall : 0;
    this.rate = Math.max(1 - MAX_RATE_DEVIATION, Math.min(1 + MAX_RATE_DEVIATION, 1 + KP * error + KP_FAR * far + ramp / QUANTA_PER_SECOND + feedForward(fed)));
  }

  /**
   * The relief's fall over the last second (quanta a second, ≤ 0) while it falls as a ramp, else 0.
   * As the arrivals' lag shrinks back, the relief falls and the level held must rise with it, to
   * the whole target before the next late buffer. The proportional term alone follows a moving
   * level a fixed distance behind (the slope / KP, plus the dead band): on the rig the relief fell
   * ~0.34 quanta a second and the level reached the step 0.8-1.2 quanta under the target, which
   * the step's 8-9 quanta then ran dry (bench/m2e/segments/playout-trace.ts). Fed forward, the
   * rate grows the buffer as fast as the relief falls. Only a fall: a rising relief lowers the
   * level, which the proportional term may do late, never early.
   */
  private reliefRamp(nowMs: number, relief: number): number {
    const at = this.reliefAt;
    this.reliefs[at] = relief;
    this.reliefTimes[at] = nowMs;
    this.reliefAt = (at + 1) % (SLOPE_UPDATES + 1);
    const oldest = this.reliefAt; // the slot written SLOPE_UPDATES updates ago
    const seconds = (nowMs - this.reliefTimes[oldest]!) / 1000;
    if (!(seconds > 0)) return 0;
    // A step within the second (one update's change over RAMP_LIMIT) is not a ramp.
    for (let k = 0; k < SLOPE_UPDATES; k++) {
      const i = (oldest + k) % (SLOPE_UPDATES + 1);
      if (Math.abs(this.reliefs[(i + 1) % (SLOPE_UPDATES + 1)]! - this.reliefs[i]!) > RAMP_LIMIT) return 0;
    }
    const slope = (relief - this.reliefs[oldest]!) / seconds;
    return slope < 0 && slope > -RAMP_LIMIT ? slope : 0;
  }

  /** Mean and lowest low point over the last `n` windows, quanta. */
  fill(n: number): { avg: number; min: number } {
    const k = Math.min(n, this.count);
    if (k === 0) return { avg: 0, min: 0 };
    let sum = 0;
    let min = Infinity;
    for (let i = 0; i < k; i++) {
      const m = this.lows[(this.next - 1 - i + HISTORY) % HISTORY]!;
      sum += m;
      if (m < min) min = m;
    }
    return { avg: sum / k, min };
  }
}
