// Wall-clock dating of the m2e rig's recordings (bench/m2e/dating.ts) and gaps measured from the
// microphone's sink to the speaker (bench/m2e/measure.ts with both ends): generated chunk
// arrivals with known device rates and delivery delays, and generated recordings of the two sinks
// with a known skew between them.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { envelope, wallOf, type TimedRecording } from '../../bench/m2e/dating.ts';
import { measureClicks } from '../../bench/m2e/measure.ts';
import { CHANNELS, CLICKS, RATE, clickTrain } from '../../bench/m2e/signals.ts';
import { mulberry32, testSeeds } from './prng.ts';

/** Chunk arrivals of a device rendering `ratePpm` fast from wall ms `t0`, each late by 0–`jitterMs` (and now and then by much more). */
function arrivals(seed: number, ratePpm: number, t0: number, seconds: number, chunkFrames: number, jitterMs: number): { a: number[]; f: number[] } {
  const rng = mulberry32(seed);
  const a: number[] = [];
  const f: number[] = [];
  const msPerFrame = 1000 / RATE / (1 + ratePpm * 1e-6);
  for (let frames = chunkFrames; frames * msPerFrame < seconds * 1000; frames += chunkFrames) {
    const late = rng() < 0.05 ? 20 + rng() * 80 : rng() * jitterMs; // a busy recorder process, now and then
    a.push(t0 + frames * msPerFrame + late);
    f.push(frames);
  }
  return { a, f };
}

describe('m2e wall-clock dating', () => {
  test('the envelope finds the device rate and when frame 0 was rendered', () => {
    for (const seed of testSeeds([1, 2, 3])) {
      for (const ratePpm of [0, 62.5, -40, 250]) {
        const t0 = 1.7e12 + seed;
        const { a, f } = arrivals(seed, ratePpm, t0, 60, 4800, 0.5);
        const e = envelope(a, f);
        assert.ok(Math.abs(e.ratePpm - ratePpm) < 3, `seed ${seed}: rate ${e.ratePpm} ppm, true ${ratePpm}`);
        // Frame 0 and a frame a minute later are dated within the smallest delivery delay.
        for (const frame of [0, 60 * RATE - 4800]) {
          const err = wallOf(e, frame) - (t0 + (frame * 1000) / RATE / (1 + ratePpm * 1e-6));
          assert.ok(err > -0.15 && err < 0.6, `seed ${seed}, ${ratePpm} ppm: frame ${frame} dated ${err.toFixed(3)} ms off`);
        }
        assert.ok(e.chunkDelayP50Ms < 0.6, `delay p50 ${e.chunkDelayP50Ms}`);
      }
    }
  });

  test('a sink rendering whole blocks, read in chunks that beat with them, still gives its rate and its block ends', () => {
    // The sink renders 1024-frame blocks a block ahead of its clock; each chunk arrives when the
    // block holding its last frame is rendered. Chunks of 1030 and of 1019 frames drift slowly
    // against the blocks, so for seconds on end none ends with a block.
    for (const chunk of [1030, 1019, 4800]) {
      for (const ratePpm of [0, 62.5, 180]) {
        const ms = 1000 / RATE / (1 + ratePpm * 1e-6);
        const t0 = 5e5;
        const a: number[] = [];
        const f: number[] = [];
        const rng = mulberry32(chunk);
        for (let end = chunk; end * ms < 73_000; end += chunk) {
          const blockStart = Math.floor((end - 1) / 1024) * 1024;
          a.push(t0 + blockStart * ms + rng() * 0.3);
          f.push(end);
        }
        const e = envelope(a, f);
        assert.ok(Math.abs(e.ratePpm - ratePpm) < 5, `chunks of ${chunk}: rate ${e.ratePpm.toFixed(1)} ppm, true ${ratePpm}`);
        // The envelope runs through the block ends: frame 1024 k is dated a block before it plays.
        const err = wallOf(e, 1024 * 1000) - (t0 + 1024 * 999 * ms);
        assert.ok(Math.abs(err) < 0.5, `chunks of ${chunk}, ${ratePpm} ppm: block end dated ${err.toFixed(2)} ms off`);
      }
    }
  });

  test('a recording under a second keeps the nominal rate', () => {
    const { a, f } = arrivals(1, 100, 0, 0.5, 480, 0.2);
    assert.equal(envelope(a, f).ratePpm, 0);
  });
});

/** A recording of `spec`'s clicks at `atMs` (ms after frame 0), each copy `gapMs` later when given, dated from `startMs`. */
function sink(spec: typeof CLICKS, startMs: number, leadMs: number, gapMs: number | null): TimedRecording {
  const train = clickTrain(spec);
  const lead = Math.round((leadMs * RATE) / 1000);
  const frames = lead + train.length / CHANNELS + RATE;
  const out = new Int16Array(frames * CHANNELS);
  out.set(train, lead * CHANNELS);
  if (gapMs !== null) {
    const shift = Math.round((gapMs * RATE) / 1000);
    for (let i = 0; i < train.length; i++) if (train[i]) out[(lead + shift) * CHANNELS + i] = train[i]!;
  }
  return { samples: out, startMs, msPerFrame: 1000 / RATE, ratePpm: 0, rateSeconds: frames / RATE, chunkDelayP50Ms: 0.3, chunkDelayP90Ms: 0.6, chunks: 100 };
}

describe('m2e gaps from the microphone to the speaker', () => {
  test('the speaker sink rendering the direct click late adds that skew to every gap', () => {
    // The speaker's recording starts 40 ms after the mouth's; its direct click sits 5 ms later on the
    // wall clock than at the mouth (leads 300 and 265 ms: 300 − 40 + 5 = 265); the copy 80 ms after it.
    const mouth = sink(CLICKS, 1000, 300, null);
    const speaker = sink(CLICKS, 1040, 265, 80);
    const m = measureClicks({ speaker, mouth }, CLICKS.clicks, CLICKS.periodS);
    assert.ok(m.mouthSkewMs !== null && Math.abs(m.mouthSkewMs - 5) < 0.05, `skew ${m.mouthSkewMs}`);
    assert.ok(m.medianMs !== null && Math.abs(m.medianMs - 85) < 0.05, `gap ${m.medianMs}, expected 85 (80 in the speaker's recording + 5)`);
    assert.equal(m.missing, 0);
    // The speaker alone gives the old figure.
    assert.ok(Math.abs(measureClicks(speaker.samples, CLICKS.clicks, CLICKS.periodS).medianMs! - 80) < 0.05);
  });

  test('no click at the mouth leaves the gaps from the direct click, and says so', () => {
    const mouth = sink(CLICKS, 1000, 300, null);
    mouth.samples.fill(0);
    const speaker = sink(CLICKS, 1040, 265, 80);
    const m = measureClicks({ speaker, mouth }, CLICKS.clicks, CLICKS.periodS);
    assert.equal(m.mouthSkewMs, null);
    assert.ok(Math.abs(m.medianMs! - 80) < 0.05);
  });
});
