// ArrivalLag.fallFromStart() on half-second lag series traced on the rig (2026-11-29,
// bench/m2e/segments/playout-trace.ts: the receiver's arrivals, mean lag per half second, ms).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QUANTUM_MS } from '../../src/shared/constants.ts';
import { ArrivalLag } from '../../workers/arrival-lag.ts';

/** Feed one stream's half seconds (mean lag, ms) at the controller's 100 ms updates; the fall read after each. */
function falls(slotsMs: readonly number[]): number[] {
  const lag = new ArrivalLag();
  let t = 0;
  lag.tick(t);
  const out: number[] = [];
  for (const ms of slotsMs) {
    for (let k = 0; k < 5; k++) {
      for (let p = 0; p < 4; p++) lag.add(ms / QUANTUM_MS);
      lag.tick((t += 100));
    }
    out.push(lag.fallFromStart() * QUANTUM_MS);
  }
  return out;
}

// A join without a bump, and one that rose to 52.8 ms in its first seconds, then fell back onto the same ramp.
const plain = [34.4, 33.7, 32.7, 32.3, 31.9, 31.3, 30.8, 30.3, 30.0, 29.4, 28.8, 28.2, 27.8, 28.1, 27.1, 26.7, 26.0, 25.8, 25.3, 25.3];
const bumped = [34.3, 38.7, 43.2, 47.1, 51.8, 52.8, 47.8, 50.9, 49.4, 40.9, 43.1, 40.5, 31.4, 32.8, 31.4, 25.9, 25.6, 25.1, 24.7, 24.2];

test('a ramp from the first second: the fall is read from its top', () => {
  const f = falls(plain);
  assert.ok(Math.abs(f.at(-1)! - (34.4 - 25.3)) < 0.01, `fall ${f.at(-1)} ms`);
});

test('a passing bump in the first seconds: nothing while it lasts, then the fall from the first half second', () => {
  const f = falls(bumped);
  assert.deepEqual(f.slice(0, 12), Array(12).fill(0), 'nothing while the lag is above where it began');
  assert.ok(Math.abs(f.at(-1)! - (34.3 - 24.2)) < 0.01, `fall ${f.at(-1)} ms, from 34.3 (not from the bump's onset, 38.7)`);
});

test('a step up (a late buffer: a new ramp) that stays above the first second is not a bump', () => {
  // Early on, then falling ~1 ms/s: above the first second for longer than a bump may last.
  const step = [15.2, 15.0, ...Array.from({ length: 40 }, (_, i) => 34.0 - 0.5 * i)];
  const f = falls(step);
  assert.ok(f.every((x) => x === 0), `no fall read: ${f.filter((x) => x > 0).length} reads`);
});

// A join (2026-11-29 evening) that fell in a staircase after a passing bump: ~4 ms down every ~3 s,
// rising up to 2.3 ms between the drops, below the highs before each.
const staircase = [33.5, 33.1, 32.3, 31.8, 33.6, 35.7, 35.5, 38.7, 37.6, 29.4, 31.1, 31.7, 29.1, 30.8, 30.6, 25.9, 25.3, 26.0, 26.1, 26.7, 27.1, 23.1, 22.8, 22.7, 21.4, 21.0, 20.3, 20.0, 19.8, 18.9];

test('a staircase fall, rising between its drops below the highs before them, is a ramp', () => {
  const f = falls(staircase);
  assert.ok(Math.abs(f.at(-1)! - (33.5 - 18.9)) < 0.01, `fall ${f.at(-1)} ms`);
  assert.ok(f.slice(11).every((x) => x > 0), `read all the way down: ${f.slice(11).map((x) => x.toFixed(1)).join(' ')}`);
});

test('a lag that climbs above its highs of the seconds before is no ramp', () => {
  const f = falls([...plain, 26.0, 26.8, 27.6]);
  assert.equal(f.at(-1), 0);
});

test('a lag that rises again after the bump is no ramp', () => {
  const f = falls([...bumped, 25.0, 26.5, 28.0]);
  assert.equal(f.at(-1), 0);
});
