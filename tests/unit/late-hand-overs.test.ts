// The depth controller's memory of late hand-overs (workers/late-hand-overs.ts): a low point
// below both its neighbourhoods is a buffer handed over late (its dip counts), a level that stays
// down is a step (it does not), and the largest is kept ~90 s.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LateHandOvers } from '../../workers/late-hand-overs.ts';

/** Windows of a second (as RecurringDips counts them). */
const SECOND = 23;

function feed(h: LateHandOvers, lows: number[]): void {
  for (const l of lows) h.onWindow(l);
}

/** Three level seconds at 10, then one window down to `low` and back. */
function oneDip(low: number): LateHandOvers {
  const h = new LateHandOvers();
  feed(h, Array(3 * SECOND).fill(10));
  feed(h, [10, 10, low, 10, 10]);
  return h;
}

test('a level that never dips: nothing', () => {
  const h = new LateHandOvers();
  feed(h, Array(10 * SECOND).fill(10));
  assert.equal(h.value(), 0);
});

test('one window 6 quanta down, the next back: a late hand-over of 6, kept from the first one seen', () => {
  const h = oneDip(4);
  feed(h, Array(2 * SECOND).fill(10));
  assert.equal(h.value(), 6);
});

test('a dip straddling two windows still reads whole', () => {
  const h = new LateHandOvers();
  feed(h, Array(3 * SECOND).fill(10));
  feed(h, [10, 10, 3, 5, 10, 10]);
  feed(h, Array(2 * SECOND).fill(10));
  assert.equal(h.value(), 7);
});

test('a step down that stays (the recurring step, a trim): not a late hand-over', () => {
  const h = new LateHandOvers();
  feed(h, Array(3 * SECOND).fill(11));
  feed(h, Array(5 * SECOND).fill(3));
  // and the rate refilling it over ~4 s
  for (let i = 0; i <= 4 * SECOND; i++) h.onWindow(3 + (8 * i) / (4 * SECOND));
  assert.ok(h.value() < 0.2, `read ${h.value()}`);
});

test('forgotten after ~90 s without another', () => {
  const h = oneDip(2);
  feed(h, Array(89 * SECOND).fill(10));
  assert.equal(h.value(), 8);
  feed(h, Array(3 * SECOND).fill(10));
  assert.equal(h.value(), 0);
});

test('a resync forgets', () => {
  const h = oneDip(2);
  h.clear();
  feed(h, Array(3 * SECOND).fill(10));
  assert.equal(h.value(), 0);
});
