// `npm run bench`: measures Tutti in headless Chromium on loopback and prints a table; writes
// bench/results.json. Options: --short (brief durations, for CI), --seconds N (engine window).
//   wake:   how the network worker learns of a captured quantum — Atomics.notify/waitAsync (used),
//           setInterval(2.67 ms), a MessagePort post per quantum — side by side in one page.
//   engine: two browsers (separate Chromium processes) stream to each other through the real app;
//           frames/s, late, lost, added latency (capture timestamp → playout), worker CPU.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { createAppServer } from '../server/http.ts';
import type { StatsMessage } from '../src/shared/worker-protocol.ts';
import { installAudit, readAudit } from '../tests/support/audit.ts';
import { joinRoom, launchPeer, type PeerBrowser } from '../tests/support/browsers.ts';
import { startServer } from '../tests/support/server.ts';
import { writeToneWav } from '../tests/support/wav.ts';
import type { WakeResult } from './wake/wake-protocol.ts';

const args = process.argv.slice(2);
const short = args.includes('--short');
const secondsArg = args.indexOf('--seconds');
const engineSeconds = secondsArg >= 0 ? Number(args[secondsArg + 1]) : short ? 5 : 30;
const wakeSeconds = short ? 2 : 10;
const here = fileURLToPath(new URL('.', import.meta.url));

async function benchWake(): Promise<WakeResult[]> {
  const app = createAppServer({ root: join(here, 'out') });
  await new Promise<void>((r) => app.server.listen(0, '127.0.0.1', r));
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const peer = await launchPeer();
  try {
    await peer.page.goto(`http://127.0.0.1:${port}/wake/index.html`);
    return await peer.page.evaluate((s) => (window as unknown as { __wakeBench(s: number): Promise<WakeResult[]> }).__wakeBench(s), wakeSeconds);
  } finally {
    await peer.close();
    await app.close();
  }
}

function stats(page: Page): Promise<StatsMessage> {
  return page.evaluate(() => (document.querySelector('tutti-app') as unknown as { stats: StatsMessage }).stats);
}

interface EngineSide {
  peer: string;
  seconds: number;
  sentPerSecond: number;
  receivedPerSecond: number;
  framesSent: number;
  framesReceived: number;
  late: number;
  lost: number;
  duplicates: number;
  rejected: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  workerCpuMsPerSecond: number;
  mainThreadMessagesPerSecond: number;
  outputLatencyMs: number;
}

async function benchEngine(): Promise<EngineSide[]> {
  const tmp = join(here, 'out');
  mkdirSync(tmp, { recursive: true });
  const server = await startServer();
  const peers: PeerBrowser[] = [];
  try {
    const a = await launchPeer({ wav: writeToneWav(join(tmp, 'a.wav'), { leftHz: 440, rightHz: 660, seconds: 5 }) });
    const b = await launchPeer({ wav: writeToneWav(join(tmp, 'b.wav'), { leftHz: 1000, rightHz: 1250, seconds: 5 }) });
    peers.push(a, b);
    for (const p of peers) await installAudit(p.page);
    await joinRoom(a.page, server.url, 'bench', 'A', { query: '' });
    await joinRoom(b.page, server.url, 'bench', 'B', { query: '' });
    for (const p of peers) {
      for (let i = 0; i < 120; i++) {
        const s = await stats(p.page);
        if (s?.peers[0] && s.peers[0].framesPerSecond > 300) break;
        await p.page.waitForTimeout(250);
      }
    }
    await a.page.waitForTimeout(2000);
    const before = await Promise.all(peers.map((p) => stats(p.page)));
    const auditBefore = await Promise.all(peers.map((p) => readAudit(p.page)));
    const latencies: { p50: number; p99: number }[][] = [[], []];
    const t0 = Date.now();
    while (Date.now() - t0 < engineSeconds * 1000) {
      await a.page.waitForTimeout(1000);
      for (let i = 0; i < 2; i++) {
        const l = (await stats(peers[i]!.page)).peers[0]?.latencyMs;
        if (l) latencies[i]!.push(l);
      }
    }
    const seconds = (Date.now() - t0) / 1000;
    const after = await Promise.all(peers.map((p) => stats(p.page)));
    const auditAfter = await Promise.all(peers.map((p) => readAudit(p.page)));
    const outLatency = await Promise.all(peers.map((p) => p.page.evaluate(() => {
      const ctx = (document.querySelector('tutti-app') as unknown as { session?: { engine: { outputLatency(): number } } }).session;
      return ctx ? ctx.engine.outputLatency() * 1000 : NaN;
    })));
    const median = (xs: number[]) => (xs.length ? xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]! : null);
    return [0, 1].map((i) => {
      const s0 = before[i]!;
      const s1 = after[i]!;
      const p0 = s0.peers[0]!;
      const p1 = s1.peers[0]!;
      return {
        peer: i ? 'B' : 'A',
        seconds: Math.round(seconds * 10) / 10,
        sentPerSecond: Math.round((s1.sent - s0.sent) / seconds),
        receivedPerSecond: Math.round((p1.received - p0.received) / seconds),
        framesSent: s1.sent - s0.sent,
        framesReceived: p1.received - p0.received,
        late: p1.late - p0.late,
        lost: p1.lost - p0.lost,
        duplicates: p1.duplicates - p0.duplicates,
        rejected: p1.rejected - p0.rejected,
        latencyP50Ms: median(latencies[i]!.map((l) => l.p50)),
        latencyP99Ms: median(latencies[i]!.map((l) => l.p99)),
        workerCpuMsPerSecond: s1.workerCpuMsPerSecond,
        mainThreadMessagesPerSecond: Math.round(((auditAfter[i]!.events - auditBefore[i]!.events) / seconds) * 10) / 10,
        outputLatencyMs: Math.round(outLatency[i]! * 100) / 100,
      };
    });
  } finally {
    await Promise.all(peers.map((p) => p.close()));
    await server.close();
  }
}

const started = new Date().toISOString();
console.log(`Tutti bench (${short ? 'short' : 'full'}): wake ${wakeSeconds} s per mode, engine ${engineSeconds} s\n`);
const wake = await benchWake();
console.log('Wake-up of the network worker per captured quantum (one page, same run):');
console.table(wake.map((w) => ({ mode: w.mode, 'wakes/s': w.wakesPerSecond, 'quanta/wake': w.quantaPerWake, 'max quanta/wake': w.maxQuantaPerWake, 'gap p50 ms': w.gapP50, 'gap p99 ms': w.gapP99, 'gap max ms': w.gapMax })));
const engine = await benchEngine();
console.log('\nEngine, two Chromium processes on loopback, default depth 8 (21.3 ms):');
console.table(engine.map((e) => ({
  peer: e.peer,
  's': e.seconds,
  'sent/s': e.sentPerSecond,
  'recv/s': e.receivedPerSecond,
  late: e.late,
  lost: e.lost,
  'latency p50 ms': e.latencyP50Ms,
  'latency p99 ms': e.latencyP99Ms,
  'added over depth p50 ms': e.latencyP50Ms === null ? null : Math.round((e.latencyP50Ms - 8 * (128 / 48)) * 100) / 100,
  'worker ms/s': e.workerCpuMsPerSecond,
  'main msgs/s': e.mainThreadMessagesPerSecond,
  'device out ms': e.outputLatencyMs,
})));
const results = { started, short, wake, engine };
writeFileSync(join(here, 'results.json'), JSON.stringify(results, null, 2));
console.log(`\nwrote ${join(here, 'results.json')}`);
