// The clock drift shown to people (workers/shown-drift.ts) against a simulated sender and receiver
// with what the bench rig showed (docs/BENCHMARKS.md): capture buffers of 8 quanta stamped from
// the device clock but delivered in a sawtooth (early by up to 22 ms, one late every 22 s), an
// output that gains ~12 ms on the wall clock in the first tens of seconds and, once, loses 35 ms
// for good, read by the page four times a second (±1 ms), and a render position that moves in
// bursts of 4 quanta. The playout rate's long estimate (drift-estimator.ts) reads the same feed,
// to show why the figure is measured differently.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DriftEstimator, LONG_WINDOW } from '../../workers/drift-estimator.ts';
import { MIN_SECONDS, MISDATED_MS, OutputClock, SETTLED_SECONDS, SKIP_SECONDS, SegmentedLine, ShownDrift } from '../../workers/shown-drift.ts';
import { mulberry32 } from './prng.ts';

const RATE = 48_000;
const BUFFER = 1024; // frames per capture buffer: 8 quanta

interface Sim {
  seconds: number;
  /** The sender's sample clock and our render clock against the wall clock, ppm. */
  senderPpm: number;
  renderPpm: number;
  sawtooth: boolean;
  /** What the output gains on the wall clock at the start (ms, time constant 10 s); default 12. */
  startGainMs?: number;
  /** The render position loses 35 ms at this second (for good). */
  stepAt?: number;
  /** Losses of whole quanta (a busy machine's fake devices): [second, quanta] the output loses, and the capture (its stamps jump ahead, the samples do not). */
  outputLosses?: readonly (readonly [number, number])[];
  captureLosses?: readonly (readonly [number, number])[];
  /** The sender's first capture stamp on the wire (u32 µs): near 2^32 to cross the wrap. */
  stampStartUs?: number;
  /** Sequence of the first quantum (u32): near 2^32 to cross the wrap. */
  seqStart?: number;
  /** Once per second of wall time, with the estimators. */
  each: (second: number, shown: ShownDrift, output: OutputClock, long: DriftEstimator) => void;
}

/** True drift of the sender's samples against our render: (1 + a) / (1 + c) − 1. */
const truth = (s: Pick<Sim, 'senderPpm' | 'renderPpm'>) => ((1 + s.senderPpm * 1e-6) / (1 + s.renderPpm * 1e-6) - 1) * 1e6;

function simulate(s: Sim): void {
  const rng = mulberry32(7);
  const shown = new ShownDrift();
  const output = new OutputClock();
  const long = new DriftEstimator(LONG_WINDOW);
  const a = s.senderPpm * 1e-6;
  const c = s.renderPpm * 1e-6;
  /** Our output's clock at wall time t (s), ms: its rate, the start-up gain, the step. */
  const outputMs = (t: number) => {
    let ms = t * 1000 * (1 + c) + (s.startGainMs ?? 12) * (1 - Math.exp(-t / 10));
    if (s.stepAt !== undefined && t >= s.stepAt) ms -= 35;
    for (const [at, quanta] of s.outputLosses ?? []) if (t >= at) ms -= quanta * 128_000 / RATE;
    return ms;
  };
  /** Quanta rendered by wall time t: the output clock in bursts of 4 quanta. */
  const rendered = (t: number) => Math.floor((outputMs(t) * RATE) / 128_000 / 4) * 4;
  let nextSecond = 1;
  let nextReading = 0.1;
  for (let k = 0; ; k++) {
    let captured = (k * BUFFER) / (RATE * (1 + a)); // wall time of the buffer's first frame
    for (const [at, quanta] of s.captureLosses ?? []) if (captured >= at) captured += (quanta * 128) / RATE;
    if (captured > s.seconds) break;
    const stampUs = Math.round(captured * 1e6 + (rng() - 0.5) * 600) + (s.stampStartUs ?? 0);
    const phase = captured % 22;
    const early = s.sawtooth ? (phase / 22) * 0.022 : 0; // 1 ms/s earlier, then one 22 ms late
    const arrived = captured + BUFFER / RATE + 0.022 - early + 0.0002;
    for (; nextReading <= arrived; nextReading += 0.25) output.add((outputMs(nextReading) + (rng() - 0.5) * 2) / 1000, nextReading * 1000);
    const q = rendered(arrived);
    for (let i = 0; i < BUFFER / 128; i++) {
      const seq = ((s.seqStart ?? 0) + k * 8 + i) >>> 0;
      const captureUs = (stampUs + Math.round((i * 128 * 1e6) / RATE)) >>> 0;
      shown.add(seq, captureUs, arrived * 1000);
      long.add(seq, q);
    }
    while (arrived >= nextSecond) s.each(nextSecond++, shown, output, long);
  }
}

describe('the clock drift shown (shown-drift.ts)', () => {
  test(`nothing for the first ${SKIP_SECONDS + MIN_SECONDS} s, then within 30 ppm through the sawtooth, the start-up gain and a 35 ms step; the rate's long estimate is hundreds off`, () => {
    for (const [senderPpm, renderPpm] of [[24, 110], [24, 255], [-500, 300], [1000, 0]] as const) {
      const want = truth({ senderPpm, renderPpm });
      const errors: number[] = [];
      let longAt90 = NaN;
      simulate({
        seconds: 300, senderPpm, renderPpm, sawtooth: true, stepAt: 31,
        each: (second, shown, output, long) => {
          const got = shown.shown(output);
          if (second < SKIP_SECONDS + MIN_SECONDS) assert.equal(got.ppm, null, `${senderPpm}/${renderPpm} ppm: a figure at ${second} s`);
          else if (second > SKIP_SECONDS + MIN_SECONDS) errors.push(got.ppm! - want);
          if (second === 90) longAt90 = (long.estimate()! * 1e6) - want;
        },
      });
      const worst = Math.max(...errors.map(Math.abs));
      assert.ok(worst <= 30, `${senderPpm}/${renderPpm} ppm (true ${want.toFixed(1)}): shown off by up to ${worst} ppm`);
      assert.ok(Math.abs(longAt90) > 100, `${senderPpm}/${renderPpm} ppm: the long estimate at 90 s is off by only ${longAt90.toFixed(0)} ppm`);
    }
  });

  test('a busy machine\'s devices losing a quantum or a few at a time on both sides: within 40 ppm from the first figure, 20 from 150 s (a split at 8 ms read them as slope: 240 off)', () => {
    const rng = mulberry32(11);
    /** Losses of 1–3 quanta, most of them (as a headless run on a loaded machine showed) between 30 and 60 s, some later. */
    const losses = (n: number) => Array.from({ length: n }, () => [rng() < 0.7 ? 30 + 30 * rng() : 60 + 140 * rng(), 1 + Math.floor(rng() * 3)] as const);
    for (const [senderPpm, renderPpm] of [[1000, 0], [3000, -200], [24, 110]] as const) {
      const want = truth({ senderPpm, renderPpm });
      const early: number[] = [];
      const late: number[] = [];
      simulate({
        seconds: 200, senderPpm, renderPpm, sawtooth: true, outputLosses: losses(25), captureLosses: losses(12),
        each: (second, shown, output) => {
          if (second > SKIP_SECONDS + MIN_SECONDS) (second < 150 ? early : late).push(Math.abs(shown.shown(output).ppm! - want));
        },
      });
      const where = `${senderPpm}/${renderPpm} ppm (true ${want.toFixed(1)})`;
      assert.ok(Math.max(...early) <= 40, `${where}: shown off by up to ${Math.max(...early)} ppm before 150 s`);
      assert.ok(Math.max(...late) <= 20, `${where}: shown off by up to ${Math.max(...late)} ppm from 150 s`);
    }
  });

  test('without sawtooth, start-up gain or step it reads within 5 ppm from the first figure on', () => {
    const want = truth({ senderPpm: 80, renderPpm: -40 });
    simulate({
      seconds: 200, senderPpm: 80, renderPpm: -40, sawtooth: false, startGainMs: 0,
      each: (second, shown, output) => {
        if (second > SKIP_SECONDS + MIN_SECONDS) assert.ok(Math.abs(shown.shown(output).ppm! - want) <= 5, `${shown.shown(output).ppm} ppm at ${second} s, true ${want}`);
      },
    });
  });

  test('the capture stamp and the sequence wrap (2^32 µs, 2^32 quanta) without a jump in the figure', () => {
    const want = truth({ senderPpm: 50, renderPpm: 150 });
    simulate({
      seconds: 200, senderPpm: 50, renderPpm: 150, sawtooth: true,
      stampStartUs: 2 ** 32 - 100e6, // wraps 100 s in
      seqStart: 2 ** 32 - 375 * 120, // wraps 120 s in
      each: (second, shown, output) => {
        if (second > SKIP_SECONDS + MIN_SECONDS) assert.ok(Math.abs(shown.shown(output).ppm! - want) <= 30, `${shown.shown(output).ppm} ppm at ${second} s, true ${want}`);
      },
    });
  });

  test('after a resync the last figure stands until the new fit has its minute', () => {
    const d = new ShownDrift();
    const output = new OutputClock();
    const feed = (seq0: number, fromMs: number, seconds: number) => {
      for (let i = 0; i < 375 * seconds; i++) {
        const ms = fromMs + (i * 128_000) / RATE;
        d.add((seq0 + i) >>> 0, Math.round(ms * 1000 * (1 - 100e-6)) >>> 0, ms);
        if (i % 94 === 0) output.add(ms / 1000 + 1, ms);
      }
    };
    feed(0, 0, SKIP_SECONDS + MIN_SECONDS + 5);
    const before = d.shown(output);
    assert.ok(before.ppm !== null && Math.abs(before.ppm - 100) <= 5, JSON.stringify(before));
    d.reset();
    feed(1_000_000, (SKIP_SECONDS + MIN_SECONDS + 5) * 1000, 30);
    assert.deepEqual(d.shown(output).ppm, before.ppm);
  });
  test('after a stall the output timestamp misdated for ~20 s (as on the rig): the seconds whose claimed latency is off leave C, and the figure stays within 10 ppm of the truth (without the claims: 38 off)', () => {
    // The bench rig (docs/BENCHMARKS.md, "Where the drift outliers come from"): our output stalls
    // 11 ms at 40 s, for good; getOutputTimestamp's context time then reads up to 30 ms early and
    // comes back over ~20 s (a quick part and a slow one), while the render count steps once. The
    // page reads the clock 20 times a second, the fit takes one reading in five; the render moves
    // in bursts of 4 quanta, so the latency a reading claims is the device's 8 ms, the burst's
    // phase (0–10.7 ms) and the misdating.
    const run = (withClaims: boolean, misdate: boolean) => {
      const rng = mulberry32(5);
      const [senderPpm, renderPpm] = [24, 62];
      const want = truth({ senderPpm, renderPpm });
      const shown = new ShownDrift();
      const output = new OutputClock();
      const c = renderPpm * 1e-6;
      const trueMs = (t: number) => t * 1000 * (1 + c) + 12 * (1 - Math.exp(-t / 10)) - (t >= 40 ? 11 : 0);
      const misdatedMs = (t: number) => (misdate && t >= 40 ? 30 * Math.exp(-(t - 40) / 3) + 2 * Math.exp(-(t - 40) / 10) : 0);
      const burst = (4 * 128 * 1000) / RATE;
      const errors: number[] = [];
      let seq = 0;
      for (let k = 0; k * 0.05 <= 200; k++) {
        const t = k * 0.05 + 0.013;
        const contextMs = trueMs(t) - misdatedMs(t) + (rng() - 0.5) * 0.2;
        const claimed = 8 + (burst - ((t * 1000) % burst)) + misdatedMs(t);
        output.add(contextMs / 1000, t * 1000, withClaims ? claimed : NaN, k % 5 === 0);
        // The sender's quanta captured by now, stamped on its clock (24 ppm fast).
        for (; (seq * 128) / RATE / (1 + senderPpm * 1e-6) <= t; seq++) shown.add(seq, Math.round(((seq * 128) / RATE / (1 + senderPpm * 1e-6)) * 1e6) >>> 0, t * 1000 + 5);
        if (k % 20 === 0 && t > SKIP_SECONDS + MIN_SECONDS) {
          const got = shown.shown(output).ppm;
          if (got !== null) errors.push(got - want);
        }
      }
      return { errors, worst: Math.max(...errors.map(Math.abs)), left: output.misdatedSeconds };
    };
    const clean = run(true, false);
    assert.equal(clean.left, 0, 'no second of a clean output is left out');
    assert.ok(clean.worst <= 5, `clean: off by up to ${clean.worst} ppm`);
    const guarded = run(true, true);
    assert.ok(guarded.errors.length > 60, `a figure for ${guarded.errors.length} s`);
    assert.ok(guarded.left >= 8 + SETTLED_SECONDS && guarded.left <= 12 + SETTLED_SECONDS, `${guarded.left} seconds left out (the claim is over ${MISDATED_MS} ms off for ~8 s, then ${SETTLED_SECONDS} settling)`);
    // The clean run's first figures read up to 4 ppm low (the start-up gain's tail); with fewer
    // seconds of C, the guarded one's read up to 8.
    assert.ok(guarded.worst <= 10, `with the claims: off by up to ${guarded.worst} ppm`);
    const unguarded = run(false, true);
    assert.ok(unguarded.worst > 30, `without the claims the misdating tilts C past the ±30 ppm target: off by up to ${unguarded.worst} ppm`);
  });

  test('a CI run\'s two series, losses in most seconds (32 of 59 in A): the sender 1000 ppm fast reads within 60 ppm (the median step read −838)', () => {
    // Per-second means (ms, each from its first) a clean-clone CI run printed for the +1000 ppm
    // test of tests/e2e/truth.spec.ts (stop 42): A's clean seconds step +1.0 ms, C's 0.0; the
    // rest are losses of the headless browsers' fake devices, 0.5 to 33 ms each.
    const A = '0.00 0.71 1.73 0.95 -2.51 -5.62 -6.95 -14.44 -16.28 -15.26 -14.27 -13.26 -12.22 -11.23 -12.11 -26.86 -32.30 -31.35 -30.33 -29.37 -28.34 -27.30 -28.07 -28.00 -27.00 -25.98 -24.95 -23.97 -26.38 -27.32 -26.29 -25.34 -24.37 -26.78 -27.64 -26.68 -25.73 -26.92 -33.74 -35.91 -35.08 -38.79 -38.46 -37.43 -39.26 -40.70 -40.47 -49.75 -74.10 -79.44 -81.72 -115.17 -143.44 -167.79 -168.25 -169.44 -171.01 -174.94 -179.82 -178.84';
    const C = '0.00 -4.80 -4.80 -4.80 -7.50 -13.46 -15.46 -17.45 -18.14 -18.12 -18.12 -18.12 -18.12 -18.12 -18.12 -32.53 -42.13 -44.13 -44.80 -44.79 -44.80 -44.80 -45.87 -47.47 -47.46 -47.47 -47.46 -47.46 -52.12 -58.14 -60.79 -60.80 -60.80 -60.80 -60.80 -60.79 -60.80 -60.81 -60.81 -60.80 -60.81 -64.00 -66.15 -66.14 -68.12 -71.46 -71.48 -74.80 -97.38 -105.07 -106.12 -145.01 -168.33 -188.79 -190.14 -191.45 -198.80 -203.47 -212.79 -212.81';
    const slope = (series: string) => {
      const line = new SegmentedLine(240);
      series.split(' ').forEach((v, i) => line.push(i * 1000, Number(v)));
      return line.slope()!;
    };
    const a = slope(A);
    const c = slope(C);
    const shown = ((1 + a) / (1 + c) - 1) * 1e6;
    assert.ok(Math.abs(c * 1e6) <= 50, `C ${(c * 1e6).toFixed(0)} ppm`);
    assert.ok(Math.abs(shown - 1000) <= 60, `shown ${shown.toFixed(0)} ppm (A ${(a * 1e6).toFixed(0)}, C ${(c * 1e6).toFixed(0)})`);
  });
});
