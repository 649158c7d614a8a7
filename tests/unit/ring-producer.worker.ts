// Producer thread for ring-threads.test.ts: plays the capture worklet's role on the capture ring.
// Pushes `quanta` quanta of stereo samples in random-sized pieces; sample i (counting from 0
// over the whole run) has the value ringValue(i), so the consumer can check order and integrity.
// After each completed quantum: QUANTA = count, Atomics.add(WAKE, 1), Atomics.notify(WAKE).
// When the ring is full it yields briefly and retries (the real worklet would count an overflow).

import { parentPort, workerData } from 'node:worker_threads';
import { QUANTUM_SAMPLES } from '../../src/shared/constants.ts';
import { CAP_I32, CaptureViews } from '../../src/shared/memory-layout.ts';
import type { CaptureMemory } from '../../src/shared/memory-layout.ts';
import { mulberry32, randInt } from './prng.ts';

export interface ProducerData {
  mem: CaptureMemory;
  quanta: number;
  seed: number;
  maxPush: number;
}

export interface ProducerResult {
  pushed: number;
  wakes: number;
  fullRetries: number;
}

/** Exact in Float32 up to 2^24; never 0, so an untouched zero can not pass for data. */
export function ringValue(i: number): number {
  return (i % 0xffffff) + 1;
}

function main(data: ProducerData): void {
  const views = new CaptureViews(data.mem);
  const rng = mulberry32(data.seed);
  const total = data.quanta * QUANTUM_SAMPLES;
  const PAD = 16;
  const chunk = new Float32Array(data.maxPush + 2 * PAD);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  let next = 0;
  let wakes = 0;
  let fullRetries = 0;
  while (next < total) {
    const n = Math.min(randInt(rng, 1, data.maxPush), total - next);
    const off = randInt(rng, 0, PAD);
    // Poison around the window: push must read only [off, off + n).
    chunk.fill(-1);
    for (let k = 0; k < n; k++) chunk[off + k] = ringValue(next + k);
    let done = 0;
    while (done < n) {
      const w = views.ring.push(chunk, n - done, off + done);
      if (w === 0) {
        fullRetries++;
        Atomics.wait(nap, 0, 0, 0.02); // yield ~20 µs
        continue;
      }
      done += w;
      next += w;
      while (Math.floor(next / QUANTUM_SAMPLES) > wakes) {
        wakes++;
        Atomics.add(views.i32, CAP_I32.WAKE, 1);
        Atomics.notify(views.i32, CAP_I32.WAKE);
      }
    }
  }
  const result: ProducerResult = { pushed: next, wakes, fullRetries };
  parentPort?.postMessage(result);
}

// Also imported by the test for ringValue: only run when started as the producer.
const data = workerData as ProducerData | null | undefined;
if (parentPort !== null && data?.mem !== undefined) main(data);
