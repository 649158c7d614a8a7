// The mouth-to-ear detectors (bench/m2e) on generated recordings: click onsets and their pairing
// (known gaps, a missing copy, a doubled copy, noise, a quieter copy) and the sustained-tone
// glitch counter (dropouts, skipped and repeated quanta).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { detectOnsets, frameMagnitude, pairClicks } from '../../bench/m2e/onsets.ts';
import { CHANNELS, CLICKS, RATE, clickTrain, tone, type ClickSpec } from '../../bench/m2e/signals.ts';
import { spread } from '../../bench/m2e/spread.ts';
import { TONE_HZ, toneGlitches } from '../../bench/m2e/tone.ts';
import { mulberry32, testSeeds } from './prng.ts';

/**
 * A speaker-monitor recording: the click train as played directly, after `leadS` of silence, plus
 * one copy per click delayed by `gapsMs[k]` (null: no copy) at `copyGain`, plus extra onsets.
 */
function recording(spec: ClickSpec, gapsMs: (number | null)[], o: { leadS?: number; copyGain?: number; extraMs?: number[]; noise?: number; seed?: number } = {}): Int16Array {
  const train = clickTrain(spec);
  const lead = Math.round((o.leadS ?? 0.3) * RATE);
  const frames = lead + train.length / CHANNELS + RATE;
  const mix = new Float64Array(frames * CHANNELS);
  const width = Math.round((spec.pulseMs * RATE) / 1000);
  const add = (startFrame: number, level: number) => {
    for (let f = startFrame; f < startFrame + width && f < frames; f++) for (let c = 0; c < CHANNELS; c++) mix[f * CHANNELS + c]! += level;
  };
  for (let i = 0; i < train.length; i++) mix[lead * CHANNELS + i]! += train[i]! / 32768;
  for (let k = 0; k < spec.clicks; k++) {
    const at = lead + Math.round((spec.firstS + k * spec.periodS) * RATE);
    const gap = gapsMs[k];
    if (gap !== null && gap !== undefined) add(at + Math.round((gap * RATE) / 1000), spec.amplitude * (o.copyGain ?? 1));
  }
  for (const ms of o.extraMs ?? []) add(lead + Math.round((ms * RATE) / 1000), spec.amplitude);
  const rng = mulberry32(o.seed ?? 1);
  const out = new Int16Array(mix.length);
  for (let i = 0; i < mix.length; i++) {
    const n = o.noise ? (rng() * 2 - 1) * o.noise : 0;
    out[i] = Math.max(-32768, Math.min(32767, Math.round((mix[i]! + n) * 32767)));
  }
  return out;
}

function measure(rec: Int16Array, expectedClicks = CLICKS.clicks) {
  return pairClicks(detectOnsets(frameMagnitude(rec, CHANNELS), RATE), RATE, { expectedClicks });
}

/** Within one frame of the true gap (onsets are frame indices). */
function assertGaps(actual: (number | null)[], expected: (number | null)[], msg?: string): void {
  assert.equal(actual.length, expected.length, msg);
  actual.forEach((a, k) => {
    const e = expected[k]!;
    if (e === null) assert.equal(a, null, `click ${k}: ${msg ?? ''}`);
    else assert.ok(a !== null && Math.abs(a - e) <= 1000 / RATE + 1e-9, `click ${k}: gap ${a} ms, expected ${e} ms ${msg ?? ''}`);
  });
}

describe('m2e click onsets and pairing', () => {
  test('known gaps, steady and varying, are measured to the frame', () => {
    const steady = Array<number>(CLICKS.clicks).fill(83.4);
    const r1 = measure(recording(CLICKS, steady));
    assertGaps(r1.gapsMs, steady);
    assert.deepEqual([r1.missing, r1.doubled, r1.strays, r1.directMissing], [0, 0, 0, 0]);

    const varying = [6.7, 13.2, 45, 89.125, 152, 300, 599, 20, 3.5, 70, 71, 72];
    const r2 = measure(recording(CLICKS, varying));
    assertGaps(r2.gapsMs, varying);
    assert.equal(r2.direct.length, CLICKS.clicks);
    // The direct clicks are the played train: exactly one period apart.
    r2.direct.slice(1).forEach((d, k) => assert.equal(d - r2.direct[k]!, RATE));
  });

  test('a missing copy is null and counted; the others are still paired', () => {
    const gaps: (number | null)[] = Array<number | null>(CLICKS.clicks).fill(40);
    gaps[0] = null;
    gaps[5] = null;
    const r = measure(recording(CLICKS, gaps));
    assertGaps(r.gapsMs, gaps);
    assert.equal(r.missing, 2);
    assert.equal(r.doubled, 0);
  });

  test('every copy missing: the direct train alone is found, all missing', () => {
    const r = measure(recording(CLICKS, Array<null>(CLICKS.clicks).fill(null)));
    assert.equal(r.direct.length, CLICKS.clicks);
    assert.equal(r.missing, CLICKS.clicks);
  });

  test('a doubled copy counts once as doubled and the first copy gives the gap', () => {
    const gaps = Array<number>(CLICKS.clicks).fill(60);
    // Click 3's copy plays again 30 ms later: within its window, so it is one doubled click.
    const r = measure(recording(CLICKS, gaps, { extraMs: [(CLICKS.firstS + 3 * CLICKS.periodS) * 1000 + 90] }));
    assertGaps(r.gapsMs, gaps);
    assert.equal(r.doubled, 1);
    assert.equal(r.missing, 0);
  });

  test('a steady copy train does not pass for the direct one (the earliest periodic train wins)', () => {
    // Copies exactly as periodic as the direct clicks, and a copy train that starts before the
    // recording's first direct click could not: the direct train is always the earlier one.
    const r = measure(recording(CLICKS, Array<number>(CLICKS.clicks).fill(500)));
    assert.equal(r.direct.length, CLICKS.clicks);
    assertGaps(r.gapsMs, Array<number>(CLICKS.clicks).fill(500));
  });

  test('onsets outside every window are strays, and a gap beyond the window is missing', () => {
    const gaps = Array<number>(CLICKS.clicks).fill(30);
    gaps[7] = 700; // later than the 600 ms window: not this click's copy
    const r = measure(recording(CLICKS, gaps));
    assert.equal(r.gapsMs[7], null);
    assert.equal(r.missing, 1);
    assert.equal(r.strays, 1);
  });

  test('noise below the level does not add onsets (seeded)', () => {
    for (const seed of testSeeds([7, 1234567])) {
      const gaps = Array.from({ length: CLICKS.clicks }, (_, k) => 10 + 7 * k);
      const r = measure(recording(CLICKS, gaps, { noise: 0.05, seed }));
      assertGaps(r.gapsMs, gaps, `seed ${seed}`);
      assert.deepEqual([r.missing, r.doubled, r.strays], [0, 0, 0], `seed ${seed}`);
    }
  });

  test('a copy at lower amplitude is found above the level and reported missing below it', () => {
    const gaps = Array<number>(CLICKS.clicks).fill(25);
    assertGaps(measure(recording(CLICKS, gaps, { copyGain: 0.3 })).gapsMs, gaps);
    const quiet = measure(recording(CLICKS, gaps, { copyGain: 0.1 }));
    assert.equal(quiet.missing, CLICKS.clicks);
  });

  test('a 2 ms pulse is one onset; pulses 1.5 ms apart or more are two', () => {
    const mag = new Float32Array(RATE / 10);
    mag.fill(0.5, 100, 196); // 2 ms
    assert.deepEqual(detectOnsets(mag, RATE), [100]);
    mag.fill(0.5, 196 + 73, 300); // after 73 frames (1.52 ms) of quiet
    assert.deepEqual(detectOnsets(mag, RATE), [100, 269]);
  });

  test('a recording missing direct clicks says so', () => {
    const short = { ...CLICKS, clicks: 8 };
    const r = measure(recording(short, Array<number>(8).fill(20)), CLICKS.clicks);
    assert.equal(r.directMissing, CLICKS.clicks - 8);
  });

  test('spread: median of even and odd counts, nulls ignored', () => {
    assert.deepEqual(spread([3, null, 1, 2]), { n: 3, median: 2, min: 1, max: 3, p10: 1, p90: 3 });
    assert.equal(spread([1, 2, 3, 10])!.median, 2.5);
    assert.equal(spread([null]), null);
  });
});

describe('m2e sustained-tone glitches', () => {
  const seconds = 5;
  /** The rig's tone (left channel) as recorded after 0.25 s of silence, float; `edit` damages it. */
  function recordedTone(edit?: (x: Float64Array, start: number) => Float64Array): Float64Array {
    const t = tone(seconds, TONE_HZ, 0.5);
    const lead = Math.round(0.25 * RATE);
    const x = new Float64Array(lead + t.length + lead);
    for (let f = 0; f < t.length; f++) x[lead + f] = t[f]! / 32768;
    return edit ? edit(x, lead) : x;
  }

  test('a clean tone has no glitch, also under a steady resampling ratio', () => {
    assert.deepEqual(toneGlitches(recordedTone(), RATE, TONE_HZ).events, []);
    // 300 ppm fast: a steady phase slope, not a jump.
    const fast = recordedTone((x) => {
      const y = new Float64Array(x.length);
      for (let i = 0; i < y.length - 1; i++) {
        const p = i * 1.0003;
        const j = Math.floor(p);
        y[i] = j + 1 < x.length ? x[j]! + (p - j) * (x[j + 1]! - x[j]!) : 0;
      }
      return y;
    });
    const g = toneGlitches(fast, RATE, TONE_HZ);
    assert.deepEqual(g.events, []);
    assert.ok(g.seconds > seconds - 0.5 && g.seconds < seconds, `analysed ${g.seconds} s`);
  });

  test('a silent quantum is one dip', () => {
    const g = toneGlitches(recordedTone((x, s) => x.fill(0, s + RATE, s + RATE + 128)), RATE, TONE_HZ);
    assert.equal(g.dips, 1);
    assert.equal(g.jumps, 0);
    assert.ok(Math.abs(g.events[0]!.atS - (0.25 + 1)) < 0.03, `at ${g.events[0]!.atS} s`);
  });

  for (const quanta of [1, 2, 3, 4, 5, 6, 7]) {
    test(`${quanta} skipped quanta (a splice, no gap) are one jump`, () => {
      const cut = (x: Float64Array, s: number) => Float64Array.from([...x.subarray(0, s + 2 * RATE), ...x.subarray(s + 2 * RATE + quanta * 128)]);
      const g = toneGlitches(recordedTone(cut), RATE, TONE_HZ);
      assert.equal(g.events.length, 1, JSON.stringify(g.events));
      assert.equal(g.jumps, 1);
    });
  }

  test('a repeated quantum (the stream resumes one quantum late) is one jump', () => {
    const again = (x: Float64Array, s: number) => {
      const at = s + 3 * RATE;
      return Float64Array.from([...x.subarray(0, at), ...x.subarray(at - 128, at), ...x.subarray(at)]);
    };
    const g = toneGlitches(recordedTone(again), RATE, TONE_HZ);
    assert.equal(g.jumps, 1, JSON.stringify(g.events));
  });

  test('two dropouts far apart are two events; no tone at all is 0 s analysed', () => {
    const two = recordedTone((x, s) => x.fill(0, s + RATE, s + RATE + 256).fill(0, s + 4 * RATE, s + 4 * RATE + 128));
    assert.equal(toneGlitches(two, RATE, TONE_HZ).dips, 2);
    assert.equal(toneGlitches(new Float64Array(RATE), RATE, TONE_HZ).seconds, 0);
  });
});
