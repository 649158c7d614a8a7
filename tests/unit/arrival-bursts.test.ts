// The bursts the depth controller's start-up floor covers (workers/arrival-bursts.ts): arrivals
// closer than half a quantum to the one before are one burst, and the size is the median of the
// last 31, so a hold-up that delivers many packets at once does not count.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QUANTUM_MS } from '../../src/shared/constants.ts';
import { ArrivalBursts } from '../../workers/arrival-bursts.ts';
import { mulberry32 } from './prng.ts';

/** Bursts of `size` packets `spacingMs` apart within a burst, one every `periodMs`. */
function feed(b: ArrivalBursts, bursts: number, size: (i: number) => number, periodMs: number, spacingMs = 0.08, t0 = 0): number {
  let t = t0;
  for (let i = 0; i < bursts; i++) {
    for (let k = 0; k < size(i); k++) b.add(t + k * spacingMs);
    t += periodMs;
  }
  return t;
}

test('a device that hands over 1024-frame periods: bursts of 8 packets every 21.3 ms read 8, once 31 have closed', () => {
  const b = new ArrivalBursts();
  feed(b, 31, () => 8, 8 * QUANTUM_MS);
  assert.equal(b.size(), 0, 'the 31st burst is still open: not known yet');
  feed(b, 1, () => 8, 8 * QUANTUM_MS, 0.08, 31 * 8 * QUANTUM_MS);
  assert.equal(b.size(), 8);
});

test('a paced sender (one packet a quantum, ±0.5 ms) reads 1', () => {
  const b = new ArrivalBursts();
  const rng = mulberry32(4);
  for (let i = 0; i < 200; i++) b.add(i * QUANTUM_MS + (rng() - 0.5));
  assert.equal(b.size(), 1);
});

test('hold-ups that deliver 24 at once, and bursts split by a busy worker, leave the median at 8; clear() forgets', () => {
  const b = new ArrivalBursts();
  const rng = mulberry32(9);
  // One in five a hold-up (24 at once), one in five split into 5 + 3 by a 2 ms pause.
  let t = 0;
  for (let i = 0; i < 200; i++) {
    const r = rng();
    if (r < 0.2) for (let k = 0; k < 24; k++) b.add(t + k * 0.05);
    else if (r < 0.4) for (let k = 0; k < 8; k++) b.add(t + k * 0.05 + (k >= 5 ? 2 : 0));
    else for (let k = 0; k < 8; k++) b.add(t + k * 0.05);
    t += 8 * QUANTUM_MS;
  }
  assert.equal(b.size(), 8);
  b.clear();
  assert.equal(b.size(), 0);
});
