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

/** A recording of `spec`'s clicks after `leadMs`, each `gapMs[k]` later (null: that click absent), dated from `startMs`, its sink rendering `latencyMs` ahead. */
function sink(spec: typeof CLICKS, startMs: number, leadMs: number, gapMs: (number | null)[], latencyMs = 0, level = 1): TimedRecording {
  const train = clickTrain(spec);
  const lead = Math.round((leadMs * RATE) / 1000);
  const frames = lead + train.length / CHANNELS + RATE;
  const out = new Int16Array(frames * CHANNELS);
  const width = Math.round((spec.pulseMs * RATE) / 1000);
  for (let k = 0; k < spec.clicks; k++) {
    const g = gapMs[k];
    if (g === null || g === undefined) continue;
    const at = lead + Math.round(((spec.firstS + k * spec.periodS) * 1000 + g) * (RATE / 1000));
    out.fill(Math.round(spec.amplitude * level * 32767), at * CHANNELS, (at + width) * CHANNELS);
  }
  return { samples: out, startMs, msPerFrame: 1000 / RATE, ratePpm: 0, rateSeconds: frames / RATE, chunkDelayP50Ms: 0.3, chunkDelayP90Ms: 0.6, chunks: 100, sinkLatencyMs: latencyMs };
}

const all = (ms: number) => Array<number>(CLICKS.clicks).fill(ms);

describe('m2e gaps from the microphone to the speaker, each in its own recording', () => {
  test('gaps run from the click playing at the mouth to its copy playing at the speaker, each on its own clock', () => {
    // The mouth's recording starts 40 ms before the speaker's, and each sink plays its frames its
    // configured latency after handing them over (21.33 and 10.67 ms): a copy 80 ms after the click
    // in wall time at hand-over is 80 + 10.67 − 21.33 ms after it in play time.
    const mouth = sink(CLICKS, 1000, 300, all(0), 21.33);
    const speaker = sink(CLICKS, 1040, 260, all(80), 10.67);
    const m = measureClicks({ speaker, mouth }, CLICKS.clicks, CLICKS.periodS);
    assert.equal(m.missing, 0);
    assert.equal(m.doubled, 0);
    assert.ok(m.medianMs !== null && Math.abs(m.medianMs - (80 + 10.67 - 21.33)) < 0.05, `gap ${m.medianMs}`);
  });

  test('missing and quiet copies, and strays', () => {
    const gaps: (number | null)[] = all(90);
    gaps[3] = null;
    const mouth = sink(CLICKS, 0, 300, all(0));
    const speaker = sink(CLICKS, 0, 300, gaps);
    const extra = sink(CLICKS, 0, 300, all(700)); // onsets 700 ms after every click: beyond the window, strays
    const both = new Int16Array(speaker.samples.length);
    for (let i = 0; i < both.length; i++) both[i] = Math.max(speaker.samples[i]!, extra.samples[i]!);
    const m = measureClicks({ mouth, speaker: { ...speaker, samples: both } }, CLICKS.clicks, CLICKS.periodS);
    assert.equal(m.missing, 1);
    assert.ok(m.strays >= CLICKS.clicks - 1, `strays ${m.strays}`);
    assert.ok(Math.abs(m.medianMs! - 90) < 0.05);
    // A copy at a tenth of the click's level does not count (a quarter is the bar), even alone in its recording.
    const quiet = measureClicks({ mouth, speaker: sink(CLICKS, 0, 300, all(90), 0, 0.1) }, CLICKS.clicks, CLICKS.periodS);
    assert.equal(quiet.missing, CLICKS.clicks);
  });

  test('no copy at all: every click missing, no gap', () => {
    const m = measureClicks({ mouth: sink(CLICKS, 0, 300, all(0)), speaker: sink(CLICKS, 0, 300, []) }, CLICKS.clicks, CLICKS.periodS);
    assert.equal(m.missing, CLICKS.clicks);
    assert.equal(m.medianMs, null);
  });
});
