// The capture ring (ringbuf.js SPSC ring in createCaptureMemory) across two real threads:
// a worker_threads producer (ring-producer.worker.ts, the capture worklet's role) and this test
// thread as consumer (the network worker's role, woken through CAP_I32.WAKE with
// Atomics.waitAsync). Every sample must arrive once, in order, uncorrupted; pop must never
// write outside the window it was given.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Worker } from 'node:worker_threads';
import { CAPTURE_RING_QUANTA, QUANTUM_SAMPLES } from '../../src/shared/constants.ts';
import { CAP_I32, CaptureViews, createCaptureMemory } from '../../src/shared/memory-layout.ts';
import { mulberry32, randInt, testSeeds } from './prng.ts';
import { ringValue } from './ring-producer.worker.ts';
import { startTsWorker } from './ts-worker.ts';
import type { ProducerData, ProducerResult } from './ring-producer.worker.ts';

const CANARY = -12345.5; // never a ring value (those are positive integers)
const RING_SAMPLES = CAPTURE_RING_QUANTA * QUANTUM_SAMPLES;

function startProducer(data: ProducerData): { worker: Worker; done: Promise<ProducerResult> } {
  return startTsWorker<ProducerResult>(new URL('./ring-producer.worker.ts', import.meta.url), data);
}

describe('capture ring across two threads', () => {
  for (const seed of testSeeds([0x5eed1, 0x5eed2])) {
    test(`20,000 quanta, random push/pop sizes, seed ${seed}`, async () => {
      const QUANTA = 20_000;
      const total = QUANTA * QUANTUM_SAMPLES;
      const msg = `seed ${seed} (rerun with TUTTI_SEED=${seed})`;
      const mem = createCaptureMemory();
      const views = new CaptureViews(mem);
      assert.equal(views.ring.capacity(), RING_SAMPLES);
      const { worker, done } = startProducer({ mem, quanta: QUANTA, seed, maxPush: 3 * QUANTUM_SAMPLES });
      let failed: Error | undefined;
      done.catch((e: unknown) => (failed = e instanceof Error ? e : new Error(String(e))));

      const rng = mulberry32(seed ^ 0x9e3779b9);
      const MAX_POP = 4 * QUANTUM_SAMPLES;
      const GUARD = 16;
      const dst = new Float32Array(MAX_POP + 3 * GUARD);
      const deadline = Date.now() + 15_000;
      let next = 0;
      let waits = 0;
      const wakeIdx = CAP_I32.WAKE;

      const waitForWake = async (seen: number): Promise<void> => {
        waits++;
        const r = Atomics.waitAsync(views.i32, wakeIdx, seen, 20);
        if (r.async) await r.value;
        if (failed) throw new Error(`${msg}: producer failed: ${failed.message}`);
        if (Date.now() > deadline) {
          worker.terminate();
          assert.fail(`${msg}: timed out after ${next / QUANTUM_SAMPLES} quanta (WAKE ${Atomics.load(views.i32, wakeIdx)})`);
        }
      };

      try {
        // Let the producer fill the ring first, so its ring-full path runs for certain.
        while (!views.ring.full()) await waitForWake(Atomics.load(views.i32, wakeIdx));

        while (next < total) {
          const n = randInt(rng, 1, MAX_POP);
          const off = randInt(rng, GUARD, 2 * GUARD);
          dst.fill(CANARY);
          const seen = Atomics.load(views.i32, wakeIdx);
          const got = views.ring.pop(dst, n, off);
          assert.ok(got >= 0 && got <= n, `${msg}: pop(${n}) returned ${got}`);
          for (let i = 0; i < off; i++) if (dst[i] !== CANARY) assert.fail(`${msg}: pop(len ${n}, offset ${off}) wrote dst[${i}] = ${dst[i]} before its window`);
          for (let i = off + got; i < dst.length; i++) if (dst[i] !== CANARY) assert.fail(`${msg}: pop(len ${n}, offset ${off}) returned ${got} but wrote dst[${i}] = ${dst[i]}`);
          for (let k = 0; k < got; k++) {
            const want = ringValue(next + k);
            if (dst[off + k] !== want) {
              assert.fail(`${msg}: sample ${next + k} (quantum ${Math.floor((next + k) / QUANTUM_SAMPLES)}, index ${(next + k) % QUANTUM_SAMPLES}) = ${dst[off + k]}, want ${want}`);
            }
          }
          next += got;
          if (got === 0) await waitForWake(seen);
          else if (rng() < 0.001) await new Promise((r) => setTimeout(r, 1)); // let the ring fill up again now and then
        }
        const result = await done;
        assert.equal(result.pushed, total, msg);
        assert.equal(result.wakes, QUANTA, msg);
        assert.ok(result.fullRetries > 0, `${msg}: the producer never found the ring full`);
        assert.equal(Atomics.load(views.i32, CAP_I32.WAKE), QUANTA, `${msg}: WAKE`);
        assert.equal(Atomics.load(views.i32, CAP_I32.OVERFLOWS), 0, msg);
        assert.ok(views.ring.empty(), `${msg}: data left in the ring`);
        assert.equal(views.ring.pop(dst, 10, 0), 0, msg);
        assert.ok(waits > 0, msg);
      } finally {
        await worker.terminate();
      }
    });
  }
});

describe('capture ring windows (single thread)', () => {
  test('pop writes only [offset, offset + returned) even when the read wraps around the ring end', () => {
    const views = new CaptureViews(createCaptureMemory());
    const ring = views.ring;
    const src = new Float32Array(RING_SAMPLES);
    let produced = 0;
    let consumed = 0;
    const push = (n: number) => {
      for (let k = 0; k < n; k++) src[k] = ringValue(produced + k);
      assert.equal(ring.push(src, n, 0), n);
      produced += n;
    };
    const sink = new Float32Array(RING_SAMPLES);
    // Move both indices near the end of the storage, then make the data wrap around it.
    push(RING_SAMPLES - 100);
    assert.equal(ring.pop(sink, RING_SAMPLES - 100, 0), RING_SAMPLES - 100);
    consumed += RING_SAMPLES - 100;
    push(1000);
    for (const [len, offset, size] of [
      [700, 100, 1000], // wraps: 101 samples before the storage end, the rest after
      [50, 0, 60],
      [5000, 37, 5100], // asks for more than is available
    ] as const) {
      const dst = new Float32Array(size).fill(CANARY);
      const avail = produced - consumed;
      const got = ring.pop(dst, len, offset);
      assert.equal(got, Math.min(len, avail));
      for (let i = 0; i < dst.length; i++) {
        if (i >= offset && i < offset + got) assert.equal(dst[i], ringValue(consumed + i - offset), `dst[${i}]`);
        else assert.equal(dst[i], CANARY, `pop(len ${len}, offset ${offset}) wrote dst[${i}] outside its window`);
      }
      consumed += got;
    }
    assert.ok(ring.empty());
  });

  test('push reads only its window and stops at capacity; a full ring accepts nothing', () => {
    const views = new CaptureViews(createCaptureMemory());
    const ring = views.ring;
    const src = new Float32Array(RING_SAMPLES + 64).fill(CANARY);
    for (let k = 0; k < RING_SAMPLES; k++) src[10 + k] = ringValue(k);
    assert.equal(ring.push(src, 300, 10), 300);
    assert.equal(ring.push(src, RING_SAMPLES, 310), RING_SAMPLES - 300, 'push is cut at capacity');
    assert.ok(ring.full());
    assert.equal(ring.push(src, 1, 10), 0);
    const dst = new Float32Array(RING_SAMPLES);
    assert.equal(ring.pop(dst, RING_SAMPLES, 0), RING_SAMPLES);
    for (let k = 0; k < RING_SAMPLES; k++) if (dst[k] !== ringValue(k)) assert.fail(`sample ${k} = ${dst[k]}`);
  });
});
