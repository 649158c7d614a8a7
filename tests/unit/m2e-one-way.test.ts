// The m2e's click-by-click comparison of the app's one-way figure with the measured gap
// (bench/m2e/one-way-per-click.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oneWayPerClick, type OneWaySecond } from '../../bench/m2e/one-way-per-click.ts';

/** Clicks 1 s apart from t0, heard `gap` after; stats read 180 ms after each whole second from t0 − 0.5 s, each reporting what `stat` says for that second. */
function join(gaps: (number | null)[], stat: (second: number) => number): { heard: (number | null)[]; seconds: OneWaySecond[] } {
  const t0 = 1_000_000;
  const heard = gaps.map((g, k) => (g === null ? null : t0 + k * 1000 + g));
  const seconds: OneWaySecond[] = [];
  for (let s = 0; s <= gaps.length + 1; s++) seconds.push({ at: t0 - 500 + s * 1000 + 180, p50: stat(s) });
  return { heard, seconds };
}

test('a delay that moves within the recording: each click is held against the figure of the second it was heard in', () => {
  // A passing bump of a join's first seconds: up 2 ms a second, then down 1 (paired one second
  // off, the median would read 1.0).
  const gaps = [84, 86, 88, 90, 92, 94, 93, 92, 91, 90, 89, 88];
  // The stat of second s covers the frames heard from t0 − 0.5 + (s − 1) to t0 − 0.5 + s seconds: click s − 1's.
  const { heard, seconds } = join(gaps, (s) => gaps[Math.min(gaps.length - 1, Math.max(0, s - 1))]! + 0.5);
  const r = oneWayPerClick(heard, gaps, seconds);
  assert.equal(r.clicks, 12);
  assert.equal(r.medianMs, 0.5, 'each click within its second\'s figure');
});

test('a figure off by 6 ms reads 6 off, and clicks with no copy are left out', () => {
  const gaps = [80, null, 81, 82, null, 80];
  const { heard, seconds } = join(gaps, (s) => 86 + (s % 2));
  const r = oneWayPerClick(heard, gaps, seconds);
  assert.equal(r.clicks, 4);
  assert.ok(r.medianMs !== null && Math.abs(r.medianMs - 5.5) <= 1, `about 6 off: ${r.medianMs}`);
});

test('no dated clicks or no seconds: nothing to compare', () => {
  assert.deepEqual(oneWayPerClick([null, null], [80, 81], [{ at: 0, p50: 80 }]), { medianMs: null, clicks: 0 });
  assert.deepEqual(oneWayPerClick([1000, 2000], [80, 81], []), { medianMs: null, clicks: 0 });
  // A second without a figure (our output's first 12 s): its click has none, not the next second's.
  assert.deepEqual(oneWayPerClick([1000, 2000], [80, 90], [{ at: 1100, p50: null }, { at: 2100, p50: 91 }]), { medianMs: 1, clicks: 1 });
});
