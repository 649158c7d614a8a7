// A stream's first seconds at the receiver (bench only): a Tutti pair joined as in set-up C
// (the sender first, then the receiver), with the receiver's network worker sampled every few
// milliseconds (a worker's timer: ~4 ms) from the moment it exists (the test build's worker
// global), so that the glitches of a join's first second, before any stats message, come with
// what happened around them: our output's render count against the wall clock, the speaker
// steps the worker saw, the peer's underruns and trimmed quanta, the depth controller's target
// and held level, and the packets arrived. Per join a summary line; per 100 ms from our output's
// first render each block where a count changed (START_ALL=1: every block).

import type { Worker } from '@playwright/test';
import type { Rig } from '../../../tests/support/audio-rig.ts';
import { joinRoom, launchOnRig, type PeerBrowser } from '../../../tests/support/browsers.ts';
import { startServer } from '../../../tests/support/server.ts';
import { PEER_I32, PLAY_I32 } from '../../../src/shared/memory-layout.ts';
import { sleep } from '../record.ts';
import { RECEIVER_DEVICES, SENDER_DEVICES } from '../tutti-pair.ts';
import { r2 } from './lib.ts';

const QUANTUM_MS = 128 / 48;

/** Starts the sampler in the receiver's network worker (evaluated there; no named inner functions: the bundler's helpers do not exist there). */
const SAMPLER = ([seconds, quantaIndex, underrunsField, trimmedField]: readonly [number, number, number, number]): void => {
  // The worker's private fields (test build only): untyped here.
  const g = self as unknown as { __tuttiWorker?: any; __startUp?: unknown };
  const n = seconds * 1100;
  const cols = ['t', 'quanta', 'steps', 'stepMs', 'underruns', 'trimmed', 'target', 'held', 'received'];
  const rec: Record<string, Float64Array> = {};
  for (const c of cols) rec[c] = new Float64Array(n).fill(NaN);
  const state = { rec, count: 0 };
  g.__startUp = state;
  const id = setInterval(() => {
    const w = g.__tuttiWorker;
    if (state.count >= n) return clearInterval(id);
    if (!w) return;
    const i = state.count++;
    rec.t![i] = performance.timeOrigin + performance.now();
    rec.quanta![i] = Atomics.load(w.play.i32 as Int32Array, quantaIndex);
    rec.steps![i] = w.speaker.steps;
    rec.stepMs![i] = w.speaker.lastStepMs;
    const p = w.peerList[0];
    if (!p) return;
    rec.underruns![i] = p.writer.playCounter(underrunsField);
    rec.trimmed![i] = p.writer.playCounter(trimmedField);
    rec.target![i] = p.controller.target;
    rec.held![i] = p.controller.held();
    rec.received![i] = p.writer.counters.received;
  }, 1);
};

const READ = (): Record<string, number[]> => {
  const s = (self as unknown as { __startUp: { rec: Record<string, Float64Array>; count: number } }).__startUp;
  const out: Record<string, number[]> = {};
  for (const k of Object.keys(s.rec)) out[k] = Array.from(s.rec[k]!.subarray(0, s.count));
  return out;
};

/** The page's network worker, polled every 5 ms (tests/support/browsers.ts netWorker polls every 100 ms: the output's first render would be missed). */
async function workerOf(peer: PeerBrowser): Promise<Worker> {
  for (;;) {
    const w = peer.page.workers().find((x) => x.url().includes('net.worker'));
    if (w) return w;
    await sleep(5);
  }
}

export async function startUp(rig: Rig, joins: number, seconds: number, log: (s: string) => void): Promise<Record<string, unknown>[]> {
  const server = await startServer({ build: 'test' });
  const rows: Record<string, unknown>[] = [];
  try {
    for (let j = 1; j <= joins; j++) {
      const peers: PeerBrowser[] = [];
      try {
        const sender = await launchOnRig(rig, SENDER_DEVICES);
        peers.push(sender);
        const receiver = await launchOnRig(rig, RECEIVER_DEVICES);
        peers.push(receiver);
        const room = `start-${process.pid}-${j}`;
        // START_ALONE=1: the receiver joins an empty room (its output's start without a stream or a sender's load).
        if (!process.env.START_ALONE) {
          await joinRoom(sender.page, server.url, room, 'Sender', { query: '' });
          await sender.page.locator('input[name="master"]').fill('0');
        }
        const joined = joinRoom(receiver.page, server.url, room, 'Receiver', { query: 'test=tap' });
        joined.catch(() => {});
        const rw = await workerOf(receiver);
        await rw.evaluate(SAMPLER, [seconds, PLAY_I32.QUANTA, PEER_I32.UNDERRUNS, PEER_I32.TRIMMED] as const);
        await joined;
        await sleep(seconds * 1000 + 300);
        const r = await rw.evaluate(READ);
        const t = r.t!;
        const first = r.received!.findIndex((x) => x > 0);
        const o = r.quanta!.findIndex((x) => x > 0);
        if (o < 0) {
          log(`join ${j}: no render`);
          continue;
        }
        // Per 100 ms from our output's first render: renders against the wall clock (quanta
        // behind: a stall of our output grows it), and what changed.
        const t0 = t[o]!;
        const q0 = r.quanta![o]!;
        let lastU = 0;
        let lastT = 0;
        let lastS = r.steps![o]!;
        let glitches = 0;
        for (let b = 0; b * 100 < t.at(-1)! - t0; b++) {
          let i = -1;
          for (let k = o; k < t.length && t[k]! < t0 + (b + 1) * 100; k++) i = k;
          if (i < 0) continue;
          const u = r.underruns![i]! || 0;
          const tr = r.trimmed![i]! || 0;
          const st = r.steps![i]!;
          const behind = (t[i]! - t0) / QUANTUM_MS - (r.quanta![i]! - q0);
          if (u !== lastU || tr !== lastT || st !== lastS || process.env.START_ALL) {
            rows.push({ join: j, ms: (b + 1) * 100, behind: r2(behind), received: r.received![i], target: r.target![i], held: r2(r.held![i]!), underruns: u, trimmed: tr, 'speaker steps': st, 'last step ms': r2(r.stepMs![i]!) });
          }
          if (u !== lastU || tr !== lastT) glitches++;
          lastU = u;
          lastT = tr;
          lastS = st;
        }
        // Our output's lost time (ms behind the wall clock since its first render, the highest in
        // each second: its 4-quantum renders wobble the reading by up to 10.7 ms), and the packets
        // of the stream's first 300 ms beyond 300 ms' worth (a backlog handed over at once).
        const lostMs = [1, 2, 3, 4].map((sec) => {
          let m = -Infinity;
          for (let k = o; k < t.length && t[k]! < t0 + sec * 1000; k++) if (t[k]! >= t0 + (sec - 1) * 1000) m = Math.max(m, (t[k]! - t0) - (r.quanta![k]! - q0) * QUANTUM_MS);
          return Math.round(m);
        });
        let extra: number | string = 'none';
        if (first >= 0) {
          let k = first;
          while (k < t.length && t[k]! < t[first]! + 300) k++;
          extra = r.received![k - 1]! - Math.round(300 / QUANTUM_MS);
        }
        const last = t.length - 1;
        log(`join ${j}: output lost ${lostMs.join(' / ')} ms by 1 / 2 / 3 / 4 s; packets beyond the first 300 ms' worth ${extra}; underruns ${r.underruns![last] || 0}, trimmed ${r.trimmed![last] || 0}`);
        log(`join ${j}: first render ${Math.round(t0 - t[0]!)} ms and first arrival ${first < 0 ? 'none' : Math.round(t[first]! - t[0]!)} ms after the worker's first sample, ${glitches} glitchy 100 ms blocks`);
      } catch (err) {
        log(`join ${j}: ${String(err).slice(0, 400)}`);
      } finally {
        await Promise.all(peers.map((p) => p.close()));
      }
    }
  } finally {
    await server.close();
  }
  return rows;
}
