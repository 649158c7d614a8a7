// The playback ring (the de-jitter slots of createPlaybackMemory) across two real threads: a
// worker_threads writer (playback-writer.worker.ts, the network worker's role: JitterWriter with
// jitter, reordering, loss, duplicates, stream restarts and a slot released and claimed again)
// and this thread as the reader (the playback worklet's role: Mixer.render on a fixed period).
// Checked on every played sample: it is the sample of the frame and position it should be (a
// frame read while the writer was overwriting its slot, or from a stale slot, shows a wrong
// position or a mix of frames); frames play in order within a timeline and never twice; and the
// counters on both sides add up.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { QUANTUM_FRAMES, RESAMPLER_HALF as HALF } from '../../src/shared/constants.ts';
import { PEER_I32, PlaybackViews, createPlaybackMemory } from '../../src/shared/memory-layout.ts';
import { Mixer } from '../../worklets/mixer.ts';
import { testSeeds } from './prng.ts';
import { decodeStreamPair } from './playback-writer.worker.ts';
import type { WriterData, WriterResult } from './playback-writer.worker.ts';
import { startTsWorker } from './ts-worker.ts';

function startWriter(data: WriterData): Promise<WriterResult> {
  return startTsWorker<WriterResult>(new URL('./playback-writer.worker.ts', import.meta.url), data).done;
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

describe('playback ring across two threads', () => {
  for (const seed of testSeeds([0x91a1, 0x91a2])) {
    test(`6,000 frames with jitter, loss, duplicates, 3 restarts and a slot claimed again, seed ${seed}`, async () => {
      const msg = `seed ${seed} (rerun with TUTTI_SEED=${seed})`;
      const FRAMES = 6000;
      // A quantum every 0.5 ms (5x real time), frames up to 6 periods late, played 10 behind.
      const PERIOD = 0.5;
      const sab = createPlaybackMemory();
      const v = new PlaybackViews(sab);
      const mixer = new Mixer(v);
      const startMs = nowMs() + 300; // the writer thread's start-up
      const data: WriterData = { sab, seed, frames: FRAMES, periodMs: PERIOD, jitterPeriods: 6, depth: 10, restarts: [1500, 2600, 4200], reclaimAt: 3300, startMs };
      const done = startWriter(data);
      let writerFailed: unknown;
      done.catch((e: unknown) => (writerFailed = e));

      const outL = new Float32Array(QUANTUM_FRAMES);
      const outR = new Float32Array(QUANTUM_FRAMES);
      const failures: string[] = [];
      const fail = (m: string) => {
        if (failures.length < 10) failures.push(m);
      };
      // The input frame whose samples are being played: output samples HALF..127 of one quantum
      // and 0..HALF-1 of the next (the resampler's look-ahead; rate 1 passes samples exactly).
      let frameSeq = -1;
      let lastFrameSeq = -1;
      let timeline = -1;
      let exact = 0;
      let framesSeen = 0;
      const closeFrame = () => {
        if (frameSeq >= 0) {
          framesSeen++;
          // In order and never twice within one timeline (12 bits of sequence).
          if (lastFrameSeq >= 0) {
            const step = (frameSeq - lastFrameSeq) & 0xfff;
            if (step === 0 || step >= 2048) fail(`frame ${frameSeq & 0x7f} played after ${lastFrameSeq} (step ${step})`);
          }
          lastFrameSeq = frameSeq;
        }
        frameSeq = -1;
      };
      const renders = Math.round((FRAMES * PERIOD + 60) / PERIOD);
      for (let q = 0; q < renders && writerFailed === undefined; q++) {
        while (nowMs() < startMs + q * PERIOD) {
          // the reader's period
        }
        mixer.render(outL, outR);
        // A new timeline (a resync adopted, or a new claim of the slot): ordering starts over.
        let gens = 0;
        for (const slot of [0, 1]) gens += Atomics.load(v.i32, v.peerI32(slot, PEER_I32.ACK_GEN)) + 1000 * Atomics.load(v.i32, v.peerI32(slot, PEER_I32.STATE));
        if (gens !== timeline) {
          timeline = gens;
          frameSeq = -1;
          lastFrameSeq = -1;
        }
        for (let f = 0; f < QUANTUM_FRAMES; f++) {
          if (f === HALF) closeFrame();
          const pos = (f - HALF + QUANTUM_FRAMES) % QUANTUM_FRAMES;
          const d = decodeStreamPair(outL[f]! * 32768, outR[f]! * 32768);
          if (!d) continue; // silence, concealment, a fade or a splice: not a stored frame
          exact++;
          const [s12, at] = d;
          if (at !== pos) fail(`quantum ${q} sample ${f}: played position ${at} of frame ${s12}, want position ${pos}`);
          if (frameSeq < 0) frameSeq = s12;
          else if (s12 !== frameSeq) fail(`quantum ${q} sample ${f}: a frame mixing sequences ${frameSeq} and ${s12} (torn)`);
        }
      }
      const w = await done;
      // The worklet's counters start again at each claim: compare the last claim's.
      const last = w.counters[w.counters.length - 1]!;
      const played = Atomics.load(v.i32, v.peerI32(w.slots[w.slots.length - 1]!, PEER_I32.PLAYED));
      const got = last.received + last.recovered;
      const accounted = w.counters.reduce((n, c) => n + c.received + c.late + c.duplicates + c.stale, 0);
      console.log(`${msg}: ${w.accepted} packets, writers ${JSON.stringify(w.counters)} in slots ${w.slots.join(',')}; last claim played ${played}; ${framesSeen} frames and ${exact} stored samples checked`);
      assert.deepEqual(failures, [], msg);
      assert.equal(accounted, w.accepted, `${msg}: every packet counted once (received, late, duplicate or stale)`);
      assert.ok(played <= got, `${msg}: played ${played} ≤ stored ${got}`);
      assert.ok(framesSeen > FRAMES * 0.2, `${msg}: frames played whole: ${framesSeen} of ${FRAMES} (the check is not vacuous)`);
    });
  }
});
