// SendGovernor: per-link redundancy under congestion (workers/send-governor.ts), on a virtual clock.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONGESTED_SECONDS, MAX_RAISE_AFTER_MS, RAISE_AFTER_MS, SendGovernor } from '../../workers/send-governor.ts';

/** Tick once a second from `from` to `to` (ms), congested when `congested(t)`; returns the copies seen at each tick. */
function run(g: SendGovernor, from: number, to: number, room: number, congested: (t: number) => boolean): number[] {
  const seen: number[] = [];
  for (let t = from; t < to; t += 1000) {
    g.tick(t, congested(t), room);
    seen.push(g.copies(room));
  }
  return seen;
}

test('a clean link sends what the room asks, and a raised room setting applies at once', () => {
  const g = new SendGovernor(0);
  assert.deepEqual(run(g, 1000, 5000, 1, () => false), [1, 1, 1, 1]);
  assert.deepEqual(run(g, 5000, 7000, 3, () => false), [3, 3]);
  assert.deepEqual(run(g, 7000, 8000, 0, () => false), [0]);
});

test('a lone congested second (a stall of the sender itself) lowers nothing; two in a row do', () => {
  assert.equal(CONGESTED_SECONDS, 2);
  const g = new SendGovernor(0);
  // Isolated bursts every 3 s: never two congested seconds in a row.
  assert.deepEqual(run(g, 1000, 9000, 2, (t) => t % 3000 === 0), [2, 2, 2, 2, 2, 2, 2, 2]);
  assert.deepEqual(run(g, 9000, 12_000, 2, () => true), [2, 1, 0]);
});

test('congestion lowers the copies one per congested second (after the first) down to 0; they come back one per clean stretch', () => {
  const g = new SendGovernor(0);
  assert.deepEqual(run(g, 1000, 6000, 3, (t) => t <= 4000), [3, 2, 1, 0, 0]);
  // Clean from 4 s: one more copy 10 s after the last congestion, then one per further 10 s.
  const seen = run(g, 6000, 41_000, 3, () => false);
  const raisedAt = (copies: number) => 6000 + 1000 * seen.indexOf(copies);
  assert.equal(raisedAt(1), 4000 + RAISE_AFTER_MS);
  assert.equal(raisedAt(2), 4000 + 2 * RAISE_AFTER_MS);
  assert.equal(raisedAt(3), 4000 + 3 * RAISE_AFTER_MS);
});

test('a raise followed by congestion doubles the wait before the next raise (up to the maximum)', () => {
  const g = new SendGovernor(0);
  g.tick(1000, true, 1);
  g.tick(2000, true, 1); // R 1 → 0
  let t = 2000;
  const waits: number[] = [];
  for (let k = 0; k < 7; k++) {
    // Wait for the raise, then congest right after it (the link cannot afford the copy).
    const from = t;
    while (g.copies(1) === 0) g.tick((t += 1000), false, 1);
    waits.push(t - from);
    g.tick((t += 1000), true, 1);
    g.tick((t += 1000), true, 1);
    assert.equal(g.copies(1), 0);
  }
  assert.deepEqual(waits, [RAISE_AFTER_MS, 2 * RAISE_AFTER_MS, 4 * RAISE_AFTER_MS, 8 * RAISE_AFTER_MS, MAX_RAISE_AFTER_MS, MAX_RAISE_AFTER_MS, MAX_RAISE_AFTER_MS]);
});

test('with no copies left to shed, a congested link gets a mono mixdown; stereo returns after a clean stretch', () => {
  const g = new SendGovernor(0);
  g.tick(1000, true, 1);
  assert.deepEqual([g.copies(1), g.mono], [1, false]);
  g.tick(2000, true, 1);
  assert.deepEqual([g.copies(1), g.mono], [0, false]);
  g.tick(3000, true, 1);
  assert.deepEqual([g.copies(1), g.mono], [0, true]);
  g.tick(4000, true, 1);
  assert.equal(g.mono, true, 'the bottom of the ladder: mono, no copies');
  run(g, 5000, 4000 + RAISE_AFTER_MS, 1, () => false);
  assert.equal(g.mono, true);
  g.tick(4000 + RAISE_AFTER_MS, false, 1);
  assert.deepEqual([g.copies(1), g.mono], [0, false]);
});
