// What moves when the receiver's playout level rises (bench only): a Tutti pair joined as in
// set-up C, with both network workers sampled every few milliseconds (a worker's timer: ~4 ms)
// for `seconds` (the test build's worker global): the receiver's render count (PLAY_I32.QUANTA)
// and its depth controller's held level, and the sender's sequence. Then the receiver's tap gives each arrival
// with its sequence. Printed per second, each against its own line:
//   held           the level the rate holds (quanta);
//   arrivals, sends  the earliest arrival and send of the second against its sequence (ms: a
//                  steady stream keeps its value; the devices' ramp falls ~1 ms/s, the step is
//                  +21 ms);
//   render         our output's render count against the wall clock, detrended, less its median
//                  (quanta; the highest reading of the second: a render that pulls late shows
//                  as a fall);
//   arrival gap, send gap, transit over median
//                  the second's largest gap between arrivals and between the sender's
//                  sequence moving on (ms), and its highest transit (arrival − capture stamp)
//                  over the second's median: where a gap in the arrivals comes from (each
//                  over GAP_SHOWN_MS is also logged as it is found);
//   sender pause   the largest pause of the sender's sampler over the second (ms): its network
//                  worker not running, where a send gap is not the microphone's; receiver
//                  pause the same in the receiver's worker, where an arrival gap is after the send;
//   to render      the median time from a delivery (the first packet after a 5 ms gap) to our
//                  next render (ms): the phase of the sender's bursts against our renders.
// A rise of the held level with arrivals, sends and render on their lines is the phase: see
// "Bursts against renders" in workers/depth-controller.ts and docs/BENCHMARKS.md.

import type { Rig } from '../../../tests/support/audio-rig.ts';
import { netWorker } from '../../../tests/support/browsers.ts';
import { startServer } from '../../../tests/support/server.ts';
import { PLAY_I32 } from '../../../src/shared/memory-layout.ts';
import { sleep } from '../record.ts';
import { joinPair } from '../tutti-pair.ts';
import { med, r2, slope } from './lib.ts';

const QUANTUM_MS = 128 / 48;
/** An arrival gap longer than this is logged with the sender's and the transit's view of it, ms (a delivery every 21.3 ms is the rhythm). */
const GAP_SHOWN_MS = 26;
/** A gap between arrivals longer than this starts a delivery, ms. */
const DELIVERY_GAP_MS = 5;

interface Samples {
  t: number[];
  a: number[];
  b: number[];
}

/** Starts a sampler (setInterval at 1 ms: ~4 ms in practice) in a network worker (evaluated there): the receiver's render count and held level, or the sender's sequence. */
const SAMPLER = ([what, seconds, quantaIndex]: readonly ['receiver' | 'sender', number, number]): void => {
  // The worker's private fields (test build only): untyped here.
  const g = self as unknown as { __tuttiWorker?: any; __burstPhase?: unknown };
  const w = g.__tuttiWorker;
  if (!w) throw new Error('no __tuttiWorker: not the test build');
  const n = seconds * 1100;
  const rec = { t: new Float64Array(n), a: new Float64Array(n), b: new Float64Array(n), count: 0 };
  g.__burstPhase = rec;
  const id = setInterval(() => {
    if (rec.count >= n) return clearInterval(id);
    const i = rec.count++;
    rec.t[i] = performance.timeOrigin + performance.now();
    if (what === 'receiver') {
      rec.a[i] = Atomics.load(w.play.i32 as Int32Array, quantaIndex);
      const p = w.peerList[0];
      rec.b[i] = p ? p.controller.held() : NaN;
    } else {
      rec.a[i] = w.sender.seq;
    }
  }, 1);
};

const READ = (): Samples => {
  const rec = (self as unknown as { __burstPhase: { t: Float64Array; a: Float64Array; b: Float64Array; count: number } }).__burstPhase;
  const n = rec.count;
  return { t: Array.from(rec.t.subarray(0, n)), a: Array.from(rec.a.subarray(0, n)), b: Array.from(rec.b.subarray(0, n)) };
};

/** Sequences as counted from the first (they wrap at 2^32). */
const unwrap = (seqs: readonly number[]): number[] => seqs.map((s) => (s - seqs[0]!) >>> 0);

/** Index of the last element of sorted `xs` at or below `x` (−1: none). */
function lastAtOrBelow(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

export async function burstPhase(rig: Rig, joins: number, seconds: number, log: (s: string) => void): Promise<Record<string, unknown>[]> {
  const server = await startServer({ build: 'test' });
  const rows: Record<string, unknown>[] = [];
  try {
    for (let j = 1; j <= joins; j++) {
      const pair = await joinPair(rig, server.url, `phase-${process.pid}-${j}`, 'test=tap');
      try {
        const rw = await netWorker(pair.receiver.page);
        const sw = await netWorker(pair.sender.page);
        await rw.evaluate(SAMPLER, ['receiver', seconds, PLAY_I32.QUANTA] as const);
        await sw.evaluate(SAMPLER, ['sender', seconds, 0] as const);
        await sleep(seconds * 1000 + 500);
        const recv = await rw.evaluate(READ);
        const send = await sw.evaluate(READ);
        const tap = await rw.evaluate(() => {
          const t = (self as unknown as { __tuttiTap?: import('../../../workers/test-tap.ts').Tap }).__tuttiTap;
          const [id] = [...t!.oneWay.keys()];
          const l = t!.oneWay.get(id!)!.toJSON();
          return { seqs: l.seqs, arrivalMs: l.arrivalMs, transitMs: l.transitMs };
        });
        const t0 = recv.t[0]!;
        // Render count against the wall clock, detrended by its own slope (our output's clock).
        const renderOff = recv.t.map((t, i) => recv.a[i]! - (t - t0) / QUANTUM_MS);
        const k = slope(recv.t.map((t) => t - t0), renderOff);
        const trend = renderOff.map((o, i) => o - k * (recv.t[i]! - t0));
        const middle = med(trend);
        const renderDetrended = trend.map((o) => o - middle);
        // Render instants: the samples at which the count moved.
        const renders: number[] = [];
        for (let i = 1; i < recv.t.length; i++) if (recv.a[i]! > recv.a[i - 1]!) renders.push(recv.t[i]!);
        const aSeq = unwrap(tap.seqs);
        const arr = tap.arrivalMs;
        const sSeq = send.a.map((s) => (s - send.a[0]!) >>> 0);
        const arrBySeq = (i: number) => arr[i]! - aSeq[i]! * QUANTUM_MS;
        const sendBySeq = (i: number) => send.t[i]! - sSeq[i]! * QUANTUM_MS;
        const arr0 = arrBySeq(0);
        const send0 = sendBySeq(0);
        for (let s = 1; s < seconds; s++) {
          const from = t0 + s * 1000;
          const to = from + 1000;
          const ri = recv.t.map((t, i) => (t >= from && t < to ? i : -1)).filter((i) => i >= 0);
          const ai = arr.map((t, i) => (t >= from && t < to ? i : -1)).filter((i) => i >= 0);
          const si = send.t.map((t, i) => (t >= from && t < to ? i : -1)).filter((i) => i >= 0);
          if (!ri.length || !ai.length || !si.length) continue;
          const toRender: number[] = [];
          for (const i of ai) {
            if (i === 0 || arr[i]! - arr[i - 1]! <= DELIVERY_GAP_MS) continue;
            const r = lastAtOrBelow(renders, arr[i]!) + 1;
            if (r < renders.length) toRender.push(renders[r]! - arr[i]!);
          }
          // The second's largest gap between arrivals, and between the sender's sequence moving
          // on (its sends), ms; the highest transit (arrival − capture stamp) over the second's
          // median: a gap in the arrivals with the sends going on is the transport's or the
          // receiver's, one with the sends stalled too is the sender's.
          const gapOf = (ts: readonly number[], idx: readonly number[]) => {
            let g = 0;
            for (const i of idx) if (i > 0) g = Math.max(g, ts[i]! - ts[i - 1]!);
            return g;
          };
          let lastMove = -1;
          let sendGap = 0;
          for (const i of si) {
            if (i > 0 && send.a[i] !== send.a[i - 1]) {
              if (lastMove >= 0) sendGap = Math.max(sendGap, send.t[i]! - send.t[lastMove]!);
              lastMove = i;
            }
          }
          // The sender's worker itself: its sampler's largest pause over the second (a worker that
          // does not run samples nothing; one waiting for the microphone samples on every ~4 ms).
          const senderPause = gapOf(send.t, si);
          const receiverPause = gapOf(recv.t, ri);
          const transit = ai.map((i) => tap.transitMs[i]!);
          const arrivalGap = gapOf(arr, ai);
          if (arrivalGap > GAP_SHOWN_MS) log(`join ${j}, ${s} s: arrivals stopped ${r2(arrivalGap)} ms; the sender's sequence at most ${r2(sendGap)} ms without moving (its worker paused at most ${r2(senderPause)} ms); transit highest ${r2(Math.max(...transit))} ms against a median of ${r2(med(transit))}; the receiver's worker paused at most ${r2(receiverPause)} ms`);
          rows.push({
            join: j,
            s,
            'arrival gap': r2(arrivalGap),
            'send gap': r2(sendGap),
            'sender pause': r2(senderPause),
            'receiver pause': r2(receiverPause),
            'transit over median': r2(Math.max(...transit) - med(transit)),
            held: r2(recv.b[ri.at(-1)!]!),
            arrivals: r2(Math.min(...ai.map(arrBySeq)) - arr0),
            sends: r2(Math.min(...si.map(sendBySeq)) - send0),
            render: r2(Math.max(...ri.map((i) => renderDetrended[i]!))),
            'to render': r2(med(toRender)),
          });
        }
        log(`join ${j}: ${recv.t.length} receiver samples, ${send.t.length} sender samples, ${arr.length} arrivals`);
      } finally {
        await pair.close();
      }
    }
  } finally {
    await server.close();
  }
  return rows;
}
