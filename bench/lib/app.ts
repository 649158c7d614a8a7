// Bench helpers that drive a real Tutti app page (Node side, Playwright): read the network
// worker's stats as the UI receives them, change the jitter depth through the UI, stall the
// main thread on purpose.

import { cpus } from 'node:os';
import type { Page } from '@playwright/test';
import { QUANTUM_MS } from '../../src/shared/constants.ts';
import type { StatsMessage } from '../../src/shared/worker-protocol.ts';

/** The latest stats message the page's <tutti-app> received (1 Hz), or null before the first. */
export function stats(page: Page): Promise<StatsMessage | null> {
  return page.evaluate(() => (document.querySelector('tutti-app') as unknown as { stats: StatsMessage | null }).stats);
}

/** Wait until the page receives `peers` streams, each at ≥ `minFps` frames/s (375 is every quantum). */
export async function waitForStreams(page: Page, peers: number, minFps = 300, timeoutMs = 60_000): Promise<StatsMessage> {
  const until = Date.now() + timeoutMs;
  let s: StatsMessage | null = null;
  while (Date.now() < until) {
    s = await stats(page);
    if (s && s.peers.length >= peers && s.peers.every((p) => p.framesPerSecond >= minFps)) return s;
    await page.waitForTimeout(250);
  }
  throw new Error(`no audio: expected ${peers} streams at ≥ ${minFps} frames/s, last stats ${JSON.stringify(s?.peers.map((p) => p.framesPerSecond))}`);
}

/** Counters summed over every remote peer of one receiver. */
export interface Totals {
  received: number;
  /** Frames stored from redundant copies because their own packet was lost or not there yet. */
  recovered: number;
  late: number;
  lost: number;
  duplicates: number;
  rejected: number;
  /** Quanta the playout waited on an empty buffer (concealed; the delay grew instead of frames going late). */
  underruns: number;
  /** Quanta the playout skipped (a crossfaded splice) to cut a backlog's delay. */
  trimmed: number;
  /** Frames the receiver's own sender dropped towards these peers (send-queue rule: backlog older than 16 quanta). */
  sendDropped: number;
}

export const ZERO_TOTALS: Readonly<Totals> = { received: 0, recovered: 0, late: 0, lost: 0, duplicates: 0, rejected: 0, underruns: 0, trimmed: 0, sendDropped: 0 };

export function totals(s: StatsMessage): Totals {
  const t: Totals = { ...ZERO_TOTALS };
  for (const p of s.peers) {
    t.received += p.received;
    t.recovered += p.recovered ?? 0;
    t.late += p.late;
    t.lost += p.lost;
    t.duplicates += p.duplicates;
    t.rejected += p.rejected;
    t.underruns += p.underruns ?? 0;
    t.trimmed += p.trimmed ?? 0;
    t.sendDropped += p.sendDropped ?? 0;
  }
  return t;
}

/** b − a, field by field (counters are cumulative per peer). */
export function delta(a: Totals, b: Totals): Totals {
  return add(b, a, -1);
}

/** a + k·b, field by field. */
export function add(a: Totals, b: Totals, k = 1): Totals {
  const t = { ...a };
  for (const key of Object.keys(t) as (keyof Totals)[]) t[key] += k * b[key];
  return t;
}

/**
 * What a listener hears as a glitch, in quanta: a frame that came too late or never came (each a
 * concealed quantum), a quantum the playout waited on an empty buffer (the engine waits rather than
 * letting frames go late, so at a small depth or under load the glitches show up here), and a
 * frame skipped to cut a backlog. None is counted twice: each quantum played out is a frame, a
 * missed slot (late or lost) or an underrun's wait, and a trimmed frame was stored, not missed.
 */
export function glitches(t: Pick<Totals, 'late' | 'lost' | 'underruns' | 'trimmed'>): number {
  return t.late + t.lost + t.underruns + t.trimmed;
}

/** Frames the sender produced in the window as the receiver saw them: received (own packet or a copy) + late + lost. */
export function framesOf(t: { received: number; recovered?: number; late: number; lost: number }): number {
  return t.received + (t.recovered ?? 0) + t.late + t.lost;
}

/** Percent of the frames the sender produced in the window (see framesOf), 3 decimals. */
export function percentOf(part: number, t: { received: number; recovered?: number; late: number; lost: number }): number {
  const all = framesOf(t);
  return all > 0 ? Math.round((part / all) * 100_000) / 1000 : 0;
}

/**
 * Poll the page's stats during `ms` and keep every distinct message (the worker posts every 500 ms).
 * Returns the first and last snapshot and everything between.
 */
export async function sampleStats(page: Page, ms: number): Promise<{ first: StatsMessage; last: StatsMessage; all: StatsMessage[]; seconds: number }> {
  const first = await stats(page);
  if (!first) throw new Error('no stats yet');
  const all: StatsMessage[] = [first];
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    await page.waitForTimeout(250);
    const s = await stats(page);
    if (s && s !== all[all.length - 1] && s.sent !== all[all.length - 1]!.sent) all.push(s);
  }
  return { first, last: all[all.length - 1]!, all, seconds: (Date.now() - t0) / 1000 };
}

/** Set a manual jitter-buffer depth through the UI (automatic off, then the slider), as a user would. */
export async function setDepth(page: Page, depth: number): Promise<void> {
  const auto = page.locator('input[name="adaptive"]');
  if (await auto.isChecked()) await auto.uncheck();
  await page.locator('input[name="depth"]').fill(String(depth));
}

export function depthMs(depth: number): number {
  return depth * QUANTUM_MS;
}

/** Start busy loops of `busyMs` on the page's main thread every `everyMs` (P3). */
export async function startStalls(page: Page, busyMs: number, everyMs: number): Promise<void> {
  await page.evaluate(([busy, every]) => {
    const g = globalThis as unknown as { __benchStall?: ReturnType<typeof setInterval> };
    g.__benchStall = setInterval(() => {
      const t = performance.now();
      while (performance.now() - t < busy) {
        // busy: the main thread runs nothing else meanwhile
      }
    }, every);
  }, [busyMs, everyMs] as const);
}

export async function stopStalls(page: Page): Promise<void> {
  await page.evaluate(() => clearInterval((globalThis as unknown as { __benchStall?: ReturnType<typeof setInterval> }).__benchStall));
}

export function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Whole-machine CPU use between two snapshots, % of all cores (other agents' load included). */
export function cpuSnapshot(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const c of cpus()) {
    idle += c.times.idle;
    total += c.times.user + c.times.nice + c.times.sys + c.times.idle + c.times.irq;
  }
  return { idle, total };
}
export function busyPercent(a: { idle: number; total: number }, b: { idle: number; total: number }): number {
  const total = b.total - a.total;
  return total > 0 ? Math.round((1 - (b.idle - a.idle) / total) * 1000) / 10 : 0;
}
