// The take's two clocks (workers/take-clocks.ts): the slope of heard frames on input frames, from
// pairs taken at each 50 ms drain while both rings deliver in bursts, is the ratio of the output
// and capture clocks.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TakeClocks } from '../../workers/take-clocks.ts';
import { mulberry32 } from './prng.ts';

/**
 * A take of `seconds`: the capture delivers 1024-frame buffers (its clock off by `inPpm`), the
 * output renders 128-frame quanta in bursts of up to 4 (off by `outPpm`); a drain every 50 ms,
 * itself up to 20 ms late, pairs what both rings held.
 */
function take(seconds: number, inPpm: number, outPpm: number, seed: number, behind?: { from: number; to: number; ms: number }): TakeClocks {
  const rng = mulberry32(seed);
  const c = new TakeClocks();
  for (let t = 0.05; t < seconds; t += 0.05) {
    const at = t + 0.02 * rng();
    // `behind`: the input ring drained that much late for a while, then caught up.
    const late = behind && t >= behind.from && t < behind.to ? behind.ms / 1000 : 0;
    const input = Math.floor(((at - late) * 48_000 * (1 + inPpm * 1e-6)) / 1024) * 1024;
    const heard = Math.floor((at * 48_000 * (1 + outPpm * 1e-6)) / 512 - rng()) * 512 + 30_000;
    c.add(input, heard);
  }
  return c;
}

test('two clocks: the slope reads their ratio through the rings\' bursts; nothing before a minute', () => {
  assert.equal(take(59, 0, 0, 1).ppm(), null, 'under a minute: no figure');
  for (const [inPpm, outPpm] of [[0, 0], [0, 50], [30, -20], [-100, 0]] as const) {
    const want = ((1 + outPpm * 1e-6) / (1 + inPpm * 1e-6) - 1) * 1e6;
    const long = take(600, inPpm, outPpm, 2).ppm()!;
    assert.ok(Math.abs(long - want) < 3, `600 s, capture ${inPpm} ppm, output ${outPpm} ppm: read ${long}, want ${want}`);
    // Two minutes read it to ~10 ppm: about a millisecond of drift by their end.
    const short = take(120, inPpm, outPpm, 3).ppm()!;
    assert.ok(Math.abs(short - want) < 15, `120 s: read ${short}, want ${want}`);
    // An input that ran 30 ms behind for four minutes mid-take, then caught up, does not bend it.
    const bent = take(600, inPpm, outPpm, 4, { from: 100, to: 340, ms: 30 }).ppm()!;
    assert.ok(Math.abs(bent - want) < 3, `600 s with a stretch behind: read ${bent}, want ${want}`);
  }
  // The slide by the end: 50 ppm over 600 s is 1440 frames (30 ms).
  const c = take(600, 0, 50, 5);
  assert.ok(Math.abs(c.driftFrames(600 * 48_000)! - 1440) < 50, `slide ${c.driftFrames(600 * 48_000)}`);
});
