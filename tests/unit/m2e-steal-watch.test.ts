// The m2e's watch on the host's steal (bench/m2e/steal-watch.ts): a burst over a few seconds is
// seen in a long measurement whose mean hides it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PEAK_SECONDS, RETAKE_PEAK_PERCENT, StealWatch, worstRun } from '../../bench/m2e/steal-watch.ts';

test('the worst run of seconds: a 10 s burst of 20 % in a 110 s measurement', () => {
  const perSecond = Array(110).fill(0.3);
  for (let i = 50; i < 60; i++) perSecond[i] = 20;
  const mean = perSecond.reduce((a, b) => a + b, 0) / perSecond.length;
  assert.ok(mean < 3, `the mean hides it: ${mean}`);
  assert.equal(worstRun(perSecond, PEAK_SECONDS), 20);
  assert.ok(worstRun(perSecond, PEAK_SECONDS) >= RETAKE_PEAK_PERCENT);
  // A single bad second is diluted over the run; shorter than the run, all of it.
  assert.equal(worstRun([0, 0, 0, 0, 50, 0, 0, 0], 5), 10);
  assert.equal(worstRun([4, 6], 5), 5);
  assert.equal(worstRun([], 5), 0);
});

test('the watch reads this machine (or says it cannot) and stops cleanly', async () => {
  const w = new StealWatch().start();
  await new Promise((r) => setTimeout(r, 1100));
  const f = w.stop();
  if (f === null) return; // no /proc/stat steal column here
  assert.ok(f.meanPercent >= 0 && f.meanPercent <= 100, `mean ${f.meanPercent}`);
  assert.ok(f.peakPercent >= 0 && f.peakPercent <= 100, `peak ${f.peakPercent}`);
  assert.deepEqual(w.stop(), f, 'a second stop gives the first one\'s figures');
});
