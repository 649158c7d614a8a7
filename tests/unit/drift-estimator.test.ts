// The playout rate's drift estimator, both windows (workers/drift-estimator.ts), against a simulated real device:
// a sender 100 ppm fast whose arrivals wander by ±10 ms over tens of seconds (a sound server
// resizing the browser's buffers) and a receiver rendering in bursts of 8 quanta.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CONTROL_WINDOW, DriftEstimator, LONG_WINDOW } from '../../workers/drift-estimator.ts';

const FRAMES_PER_SECOND = 375;
const TRUE_DRIFT = 100e-6;

/** Feeds `seconds` of arrivals; calls `each` once per second with the two estimates. */
function run(seconds: number, wanderS: number, periodS: number, each: (second: number, control: number | null, long: number | null) => void): void {
  const control = new DriftEstimator(CONTROL_WINDOW);
  const long = new DriftEstimator(LONG_WINDOW);
  for (let seq = 0; seq < FRAMES_PER_SECOND * seconds; seq++) {
    const sent = seq / (FRAMES_PER_SECOND * (1 + TRUE_DRIFT));
    const arrived = sent + wanderS * Math.sin((2 * Math.PI * sent) / periodS);
    const rendered = Math.floor((FRAMES_PER_SECOND * arrived) / 8) * 8;
    control.add(seq, rendered);
    long.add(seq, rendered);
    if (seq % FRAMES_PER_SECOND === 0) each(seq / FRAMES_PER_SECOND, control.estimate(), long.estimate());
  }
}

describe('drift estimator windows', () => {
  test('the long window waits for 60 s of arrivals, then reads within 30 ppm through a ±10 ms wander', () => {
    const errors: number[] = [];
    run(420, 0.01, 30, (second, _control, long) => {
      if (second < LONG_WINDOW.minBlocks) assert.equal(long, null, `at ${second} s`);
      if (second >= 250) errors.push((long! - TRUE_DRIFT) * 1e6);
    });
    const worst = Math.max(...errors.map(Math.abs));
    assert.ok(worst < 30, `long-window estimate off by up to ${worst.toFixed(1)} ppm`);
  });

  test('the playout rate\'s quick window reads the same wander as hundreds of ppm (why the rate switches to the long one)', () => {
    let worst = 0;
    run(240, 0.01, 30, (second, control) => {
      if (second >= 30) worst = Math.max(worst, Math.abs((control! - TRUE_DRIFT) * 1e6));
    });
    assert.ok(worst > 300, `control window off by at most ${worst.toFixed(1)} ppm`);
  });

  // Bursts alone beat with the drift (8 quanta slip in 213 s at 100 ppm): a slow ±10 ms sawtooth.
  test('with render bursts alone the quick window reads within 150 ppm, the long one within 15 from 60 s and 3 from 240 s', () => {
    run(300, 0, 30, (second, control, long) => {
      if (second >= 30) assert.ok(Math.abs((control! - TRUE_DRIFT) * 1e6) < 150, `control ${control} at ${second} s`);
      if (second >= 60) assert.ok(Math.abs((long! - TRUE_DRIFT) * 1e6) < (second >= 240 ? 3 : 15), `long window ${long} at ${second} s`);
    });
  });
});

// A busy machine's sender loses time in steps (3 to 66 ms, a dozen in half a minute in a CI run):
// its arrivals pause and the line of rendered quanta per sequence jumps. The receiver underruns,
// and the controller marks the break up to 100 ms after the first arrival past the jump.
describe('drift estimator across steps', () => {
  function withSteps(marked: boolean, seed: number): number[] {
    const drift = 1000e-6;
    const est = new DriftEstimator(CONTROL_WINDOW);
    let rnd = seed;
    const next = () => ((rnd = (Math.imul(rnd, 1103515245) + 12345) >>> 0) / 2 ** 32);
    let lost = 0;
    let breakAt = -1;
    const errors: number[] = [];
    for (let seq = 0; seq < FRAMES_PER_SECOND * 40; seq++) {
      if (seq > FRAMES_PER_SECOND * 6 && next() < 13 / (FRAMES_PER_SECOND * 30)) {
        lost += 0.003 + next() * 0.063;
        breakAt = seq + Math.floor(next() * 38); // 0-100 ms of arrivals after the jump
      }
      const arrived = seq / (FRAMES_PER_SECOND * (1 + drift)) + lost;
      est.add(seq, Math.floor((FRAMES_PER_SECOND * arrived) / 8) * 8);
      if (marked && seq === breakAt) est.breakTimeline();
      if (seq % FRAMES_PER_SECOND === 0 && seq >= FRAMES_PER_SECOND * 10) errors.push((est.estimate()! - drift) * 1e6);
    }
    return errors;
  }

  test('unmarked, one slope through the steps reads thousands of ppm off; marked, within 250 ppm (render bursts in 2 s segments)', () => {
    let worstUnmarked = 0;
    let worstMarked = 0;
    for (let seed = 1; seed <= 8; seed++) {
      worstUnmarked = Math.max(worstUnmarked, ...withSteps(false, seed).map(Math.abs));
      worstMarked = Math.max(worstMarked, ...withSteps(true, seed).map(Math.abs));
    }
    assert.ok(worstUnmarked > 1000, `unmarked off by at most ${worstUnmarked.toFixed(0)} ppm`);
    assert.ok(worstMarked < 250, `marked off by up to ${worstMarked.toFixed(0)} ppm`);
  });

  test('a break with nothing to break, and breaks every second, leave the estimate on the slope', () => {
    const est = new DriftEstimator(CONTROL_WINDOW);
    est.breakTimeline(); // before any arrival: nothing happens
    for (let seq = 0; seq < FRAMES_PER_SECOND * 30; seq++) {
      const arrived = seq / (FRAMES_PER_SECOND * (1 + TRUE_DRIFT));
      est.add(seq, Math.floor((FRAMES_PER_SECOND * arrived) / 8) * 8);
      if (seq % FRAMES_PER_SECOND === 200) est.breakTimeline();
    }
    assert.ok(Math.abs(est.estimate()! - TRUE_DRIFT) * 1e6 < 150, `estimate ${est.estimate()}`);
  });
});
