// The capture's loss watch (workers/track-capture.ts LossWatch): buffers the microphone's stream
// lost, read from timestamps that also jump by a whole buffer with nothing lost.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LOSS_SEEN_WITHIN_WINDOWS, LOSS_WINDOW_BUFFERS, LossWatch, SETTLE_MIN_BUFFERS, type LossCause } from '../../workers/track-capture.ts';
import { mulberry32 } from './prng.ts';

const N = 480;

/**
 * `buffers` capture buffers of N frames; the device clock off by `ppm`; each timestamp jittered by
 * up to a millisecond and, one in five, a whole buffer late. `lose` (buffer index) is dropped,
 * and `lateWindow` (window index) has every timestamp a buffer late. Returns each loss seen:
 * [buffer index at which it was reported, frames].
 */
function run(buffers: number, o: { ppm?: number; lose?: number; lateWindow?: number; seed?: number; backlog?: boolean } = {}): [number, number][] {
  return runWithCause(buffers, o).map(([b, lost]) => [b, lost]);
}

/**
 * As run(), with each loss's cause. Buffers are read 0–20 ms after their capture time (a loaded
 * machine); with `backlog`, those within a second of the lost one are read 90–110 ms late (the
 * track processor's queue full, as before a drop).
 */
function runWithCause(buffers: number, o: { ppm?: number; lose?: number; lateWindow?: number; seed?: number; backlog?: boolean } = {}): [number, number, LossCause][] {
  const rng = mulberry32(o.seed ?? 1);
  const w = new LossWatch();
  const seen: [number, number, LossCause][] = [];
  for (let b = 0; b < buffers; b++) {
    if (b === o.lose) continue;
    const trueUs = ((b * N) / 48_000) * 1e6 * (1 + (o.ppm ?? 0) * 1e-6);
    const late = rng() < 0.2 || Math.floor(b / LOSS_WINDOW_BUFFERS) === o.lateWindow ? (N / 48_000) * 1e6 : 0;
    const stampUs = 1e12 + trueUs + late + 1000 * rng();
    const backlogged = o.backlog && o.lose !== undefined && Math.abs(b - o.lose) < 100;
    const ageUs = backlogged ? 90_000 + 20_000 * rng() : 20_000 * rng();
    const lost = w.add(stampUs, N, 1e12 + trueUs + ageUs);
    if (lost > 0) seen.push([b, lost, w.cause]);
  }
  return seen;
}

test('loss watch: nothing lost reads as nothing, through jittery timestamps, a buffer-late stretch of a whole window, and 100 ppm of drift', () => {
  for (let seed = 1; seed <= 5; seed++) {
    assert.deepEqual(run(20_000, { seed }), [], `seed ${seed}`);
    assert.deepEqual(run(20_000, { seed, ppm: 100 }), [], `seed ${seed}, 100 ppm`);
    assert.deepEqual(run(20_000, { seed, ppm: -100 }), [], `seed ${seed}, −100 ppm`);
    for (const lateWindow of [7, 100, 301]) assert.deepEqual(run(20_000, { seed, lateWindow }), [], `seed ${seed}, window ${lateWindow} all late`);
  }
});

test('loss watch: a lost buffer is reported once, whole, within LOSS_SEEN_WITHIN_WINDOWS windows', () => {
  for (let seed = 1; seed <= 5; seed++) {
    for (const lose of [3_000, 3_025, 3_049, 12_345]) {
      const seen = run(20_000, { seed, lose });
      assert.equal(seen.length, 1, `seed ${seed}, buffer ${lose}: ${JSON.stringify(seen)}`);
      assert.equal(seen[0]![1], N);
      assert.ok(seen[0]![0] > lose && seen[0]![0] <= lose + LOSS_SEEN_WITHIN_WINDOWS * LOSS_WINDOW_BUFFERS, `reported at buffer ${seen[0]![0]}`);
    }
  }
});

test('loss watch: the cause of a loss: a drop behind a backlog (buffers read ~100 ms late), or the device delivering nothing (buffers read fresh)', () => {
  for (let seed = 1; seed <= 5; seed++) {
    for (const lose of [3_000, 3_025, 3_049, 12_345]) {
      assert.deepEqual(runWithCause(20_000, { seed, lose, backlog: true }).map(([, f, c]) => [f, c]), [[N, 'dropped']], `seed ${seed}, buffer ${lose}, behind a backlog`);
      assert.deepEqual(runWithCause(20_000, { seed, lose }).map(([, f, c]) => [f, c]), [[N, 'device']], `seed ${seed}, buffer ${lose}, read fresh`);
    }
  }
});

/** As run() up to `stopAt` buffers, then the take stops: the losses seen while reading, and what settle() adds. */
function runAndSettle(stopAt: number, o: { lose?: number; seed?: number }): { seen: number; settled: number } {
  const rng = mulberry32(o.seed ?? 1);
  const w = new LossWatch();
  let seen = 0;
  for (let b = 0; b < stopAt; b++) {
    if (b === o.lose) continue;
    const trueUs = ((b * N) / 48_000) * 1e6;
    const late = rng() < 0.2 ? (N / 48_000) * 1e6 : 0;
    seen += w.add(1e12 + trueUs + late + 1000 * rng(), N, 1e12 + trueUs + 20_000 * rng());
  }
  return { seen, settled: w.settle() };
}

test('loss watch at a take\'s stop: a loss not yet confirmed is settled whole, once; with none, nothing is', () => {
  for (let seed = 1; seed <= 10; seed++) {
    // Nothing lost: wherever the take stops, nothing to settle.
    for (let stopAt = 100; stopAt < 1_000; stopAt += 7) assert.deepEqual(runAndSettle(stopAt, { seed }), { seen: 0, settled: 0 }, `seed ${seed}, stop at ${stopAt}`);
    // A loss, the take stopping from SETTLE_MIN_BUFFERS buffers after it: seen while reading or at the stop, once.
    for (const lose of [500, 520, 549]) {
      for (let stopAt = lose + 1; stopAt < lose + LOSS_SEEN_WITHIN_WINDOWS * LOSS_WINDOW_BUFFERS + 10; stopAt += 3) {
        const r = runAndSettle(stopAt, { seed, lose });
        // Evidence at the stop: the rest of the loss's window, then a whole window or SETTLE_MIN_BUFFERS of one.
        if (stopAt - lose > LOSS_WINDOW_BUFFERS + SETTLE_MIN_BUFFERS + 1 || r.seen > 0) {
          assert.equal(r.seen + r.settled, N, `seed ${seed}, lost ${lose}, stop at ${stopAt}: ${JSON.stringify(r)}`);
        } else assert.ok(r.seen + r.settled === 0 || r.seen + r.settled === N, `seed ${seed}, lost ${lose}, stop at ${stopAt}: ${JSON.stringify(r)}`);
      }
    }
  }
});
