// Soak of the signaling hub (Node, no browser; loopback only): the real hub in a child process
// (bench/lib/soak-hub.ts, so its RSS is its own and a crash shows), a few hundred attacking
// sockets in another at the lowest CPU priority (bench/lib/soak-attackers.ts: garbage, floods,
// readers that stop reading, connection churn, a crowd over the per-address limit, foreign
// origins), and two honest members
// here that relay timestamped messages to each other through the hub. First a quiet window, then
// the attack. Reported: the honest relay's latency p50/p99/max and losses in each window, the
// hub's RSS over time, and its counters. Fails if the hub dies or the honest pair stops relaying.

import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import type { SignalingHealth } from '../../server/signaling.ts';
import { busyPercent, cpuSnapshot } from '../lib/app.ts';
import type { SoakAttack, SoakAttackReport } from '../lib/soak-attackers.ts';

export interface SoakWindow {
  window: 'quiet' | 'attack';
  seconds: number;
  /** Honest messages sent, and received by the other member. */
  sent: number;
  received: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  latencyMaxMs: number | null;
  /** CPU the hub's process used, in % of one core, and the whole machine's busy % (all cores, everyone). */
  hubCpuPercent: number;
  machineBusyPercent: number;
}

export interface SoakSample {
  /** Seconds since the quiet window began. */
  t: number;
  phase: 'quiet' | 'attack' | 'after';
  rssMiB: number;
  /** From /healthz (null if it did not answer within 2 s). */
  sockets: number | null;
  topics: number | null;
  closedForAbuse: number | null;
}

export interface SoakResult {
  attack: Omit<SoakAttack, 'url'>;
  windows: SoakWindow[];
  samples: SoakSample[];
  rssMiB: { start: number; peak: number; end: number };
  /** The hub's /healthz at the end (counters and limits). */
  hub: SignalingHealth | null;
  attackers: SoakAttackReport | null;
  hubAlive: boolean;
}

/** Sizes for `npm run bench` (full: ~30 s of attack) and `--short` (a few seconds, fewer sockets). */
export function soakConfig(short: boolean): { quietSeconds: number; attack: Omit<SoakAttack, 'url'> } {
  return short
    ? { quietSeconds: 2, attack: { seconds: 5, seed: 1, garbage: 60, flood: 20, sinks: 12, slowPerSink: 1, churn: 2, crowd: 130 } }
    : { quietSeconds: 5, attack: { seconds: 30, seed: 1, garbage: 120, flood: 40, sinks: 24, slowPerSink: 1, churn: 4, crowd: 130 } };
}

const HUB = fileURLToPath(new URL('../lib/soak-hub.ts', import.meta.url));
const ATTACKERS = fileURLToPath(new URL('../lib/soak-attackers.ts', import.meta.url));
/** Each honest member publishes this often. */
const HONEST_INTERVAL_MS = 20;

/** The process's user + system CPU time in seconds (/proc/<pid>/stat, clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : NaN;
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 100) / 100;
}

async function health(base: string): Promise<SignalingHealth | null> {
  try {
    const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) });
    return ((await res.json()) as { signaling: SignalingHealth }).signaling;
  } catch {
    return null;
  }
}

/** One honest member: subscribes to the pair's topic and records the latency of the other's messages. */
class Honest {
  /** The window messages sent now belong to (a message counts in the window it was sent in). */
  window: SoakWindow['window'] = 'quiet';
  private readonly by = new Map<string, { sent: number; received: number; latencies: number[] }>();
  private constructor(readonly ws: WebSocket, readonly name: string, readonly topic: string) {
    ws.on('message', (raw) => {
      const m = JSON.parse(raw.toString()) as { type?: string; data?: { from?: string; t?: number; w?: string } };
      if (m.type !== 'publish' || m.data?.from === this.name || typeof m.data?.t !== 'number' || typeof m.data.w !== 'string') return;
      const w = this.stats(m.data.w);
      w.received++;
      w.latencies.push(performance.now() - m.data.t);
    });
  }

  private stats(w: string): { sent: number; received: number; latencies: number[] } {
    let s = this.by.get(w);
    if (!s) this.by.set(w, (s = { sent: 0, received: 0, latencies: [] }));
    return s;
  }

  static async join(url: string, name: string, topic: string): Promise<Honest> {
    const ws = new WebSocket(url, { localAddress: '127.0.0.1' });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.on('error', () => {});
    ws.send(JSON.stringify({ type: 'subscribe', topics: [topic] }));
    return new Honest(ws, name, topic);
  }

  publish(): void {
    this.stats(this.window).sent++; // counted even if the socket is gone: then it is lost
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify({ type: 'publish', topic: this.topic, data: { from: this.name, t: performance.now(), w: this.window } }));
  }

  /** What was sent in window `w` by this member, and what it received of the other's. */
  take(w: string): { sent: number; received: number; latencies: number[] } {
    return this.stats(w);
  }
}

export async function runSoak(short: boolean, log: (s: string) => void): Promise<SoakResult> {
  const { quietSeconds, attack } = soakConfig(short);
  const hub = fork(HUB, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let hubExit: string | null = null;
  hub.on('exit', (code, signal) => (hubExit = `exit code ${code}, signal ${signal}`));
  let attackers: ChildProcess | null = null;
  const honest: Honest[] = [];
  try {
    const port = await new Promise<number>((resolve, reject) => {
      hub.once('message', (m: { type?: string; port?: number }) => (m.type === 'ready' && m.port ? resolve(m.port) : reject(new Error('soak hub: bad ready message'))));
      hub.once('exit', () => reject(new Error(`soak hub exited before listening (${hubExit})`)));
    });
    const base = `http://127.0.0.1:${port}`;
    const url = `ws://127.0.0.1:${port}/`;
    const topic = randomBytes(16).toString('hex'); // unguessable, like a lesson room's name
    honest.push(await Honest.join(url, 'alice', topic), await Honest.join(url, 'bob', topic));

    const samples: SoakSample[] = [];
    const t0 = performance.now();
    let phase: SoakSample['phase'] = 'quiet';
    const sampleEveryMs = short ? 500 : 1000;
    let sampling = true;
    const sampler = (async () => {
      while (sampling && hubExit === null) {
        const h = await health(base);
        if (hubExit !== null || !hub.pid) break;
        samples.push({ t: Math.round((performance.now() - t0) / 100) / 10, phase, rssMiB: rssMiB(hub.pid), sockets: h?.sockets ?? null, topics: h?.topics ?? null, closedForAbuse: h?.closedForAbuse ?? null });
        await new Promise((r) => setTimeout(r, sampleEveryMs));
      }
    })();
    const ticker = setInterval(() => {
      for (const h of honest) h.publish();
    }, HONEST_INTERVAL_MS);

    const windows: SoakWindow[] = [];
    let cpu0 = { machine: cpuSnapshot(), hub: cpuSeconds(hub.pid!) };
    const closeWindow = async (window: SoakWindow['window'], started: number): Promise<void> => {
      const seconds = (performance.now() - started) / 1000;
      const cpu1 = { machine: cpuSnapshot(), hub: cpuSeconds(hub.pid!) };
      const usage = { hub: Math.round(((cpu1.hub - cpu0.hub) / seconds) * 1000) / 10, machine: busyPercent(cpu0.machine, cpu1.machine) };
      cpu0 = cpu1;
      await new Promise((r) => setTimeout(r, 500)); // messages in flight at the window's end
      const parts = honest.map((h) => h.take(window));
      const sent = parts.reduce((n, p) => n + p.sent, 0);
      const lat = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
      windows.push({
        window,
        seconds: Math.round(seconds * 10) / 10,
        sent,
        received: parts.reduce((n, p) => n + p.received, 0),
        latencyP50Ms: percentile(lat, 50),
        latencyP99Ms: percentile(lat, 99),
        latencyMaxMs: lat.length ? Math.round(lat[lat.length - 1]! * 100) / 100 : null,
        hubCpuPercent: usage.hub,
        machineBusyPercent: usage.machine,
      });
    };

    log(`soak: ${quietSeconds} s quiet, then ${attack.seconds} s of attack by ~${attack.garbage + attack.flood + attack.sinks * (attack.slowPerSink + 1) + attack.churn + attack.crowd} sockets`);
    await new Promise((r) => setTimeout(r, quietSeconds * 1000));
    for (const h of honest) h.window = 'attack';
    phase = 'attack';
    // Its CPU figures are taken at once (before the first await); its late messages are awaited inside.
    const quietClosed = closeWindow('quiet', t0);
    const attackStart = performance.now();
    const full: SoakAttack = { url, ...attack };
    // At the lowest CPU priority: real attackers run on their own machines, not on the hub's cores,
    // so the hub and the honest members go first here (the attackers still use every idle cycle).
    attackers = spawn('nice', ['-n', '19', process.execPath, '--import', 'tsx', ATTACKERS, JSON.stringify(full)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const report = await new Promise<SoakAttackReport | null>((resolve) => {
      attackers!.on('message', (m: { type?: string; report?: SoakAttackReport }) => m.type === 'report' && resolve(m.report ?? null));
      attackers!.once('exit', () => resolve(null));
    });
    clearInterval(ticker);
    await quietClosed;
    await closeWindow('attack', attackStart);
    if (hubExit === null) await health(base); // still answering
    phase = 'after';
    await new Promise((r) => setTimeout(r, sampleEveryMs * 2));
    sampling = false;
    await sampler;

    const end = await health(base);
    const rss = samples.map((s) => s.rssMiB);
    const result: SoakResult = {
      attack,
      windows,
      samples,
      rssMiB: { start: rss[0] ?? NaN, peak: Math.max(...rss), end: rss[rss.length - 1] ?? NaN },
      hub: end,
      attackers: report,
      hubAlive: hubExit === null,
    };
    if (hubExit !== null) throw Object.assign(new Error(`the hub died during the soak (${hubExit})`), { result });
    for (const w of windows) {
      if (w.received < w.sent * 0.99) throw Object.assign(new Error(`honest relay lost messages in the ${w.window} window: ${w.received} of ${w.sent}`), { result });
    }
    return result;
  } finally {
    if (attackers?.exitCode === null) attackers.kill();
    for (const h of honest) h.ws.terminate();
    if (hub.exitCode === null) {
      hub.disconnect();
      await new Promise((r) => setTimeout(r, 200));
      if (hub.exitCode === null) hub.kill();
    }
  }
}

/** The figures as printed by `npm run bench`. */
export function printSoak(r: SoakResult): void {
  console.log(`\nSoak: honest relay between two members through the hub (one message each per ${HONEST_INTERVAL_MS} ms), quiet then under attack:`);
  console.table(r.windows.map((w) => ({ window: w.window, s: w.seconds, sent: w.sent, received: w.received, 'p50 ms': w.latencyP50Ms, 'p99 ms': w.latencyP99Ms, 'max ms': w.latencyMaxMs, 'hub CPU %': w.hubCpuPercent, 'machine busy %': w.machineBusyPercent })));
  console.log(`Hub RSS (its own process): start ${r.rssMiB.start} MiB, peak ${r.rssMiB.peak} MiB, end ${r.rssMiB.end} MiB; over time:`);
  console.table(r.samples.map((s) => ({ 't s': s.t, phase: s.phase, 'RSS MiB': s.rssMiB, sockets: s.sockets, topics: s.topics, 'closed for abuse': s.closedForAbuse })));
  const h = r.hub;
  if (h) {
    console.log('Hub counters at the end:');
    console.table({ closedBy: h.closedBy, refused: h.refused, droppedBy: h.droppedBy });
    console.log(`frames handled ${h.messages}, copies relayed ${h.relayed}`);
  }
  if (r.attackers) console.log(`Attackers: ${r.attackers.opened} sockets opened (at most ${r.attackers.peakOpen} at once), ${r.attackers.frames} frames sent, refused ${JSON.stringify(r.attackers.refused)}, closes seen ${JSON.stringify(r.attackers.closes)}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const short = process.argv.includes('--short');
  const r = await runSoak(short, (s) => console.log(s));
  printSoak(r);
}
