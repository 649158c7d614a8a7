// CDP tracing for the bench (Node side): records a Chromium trace of one browser for a window and
// reads from it the playback worklet's process() durations and V8 garbage-collection pauses per thread.
// The worklet has no high-resolution clock of its own, so its timing comes from the browser's trace.

import type { Browser, Page } from '@playwright/test';
import { QUANTUM_MS } from '../../src/shared/constants.ts';

/** Thread names as Chromium 15x reports them in trace metadata. */
export const THREAD = {
  audioWorklet: 'Realtime AudioWorklet thread',
  worker: 'DedicatedWorker thread',
  main: 'CrRendererMain',
} as const;

/** `v8` holds the GC pause events (MinorGC, MajorGC); `devtools.timeline` names each JS call (FunctionCall with its script url). */
export const GC_CATEGORIES = ['v8', '__metadata'];
export const CALL_CATEGORIES = ['devtools.timeline', 'v8', '__metadata'];

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  args?: { name?: string; data?: { url?: string; functionName?: string } };
}

export interface DurationSummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Values over one render quantum (2.67 ms): a process() call that long misses its deadline. */
  overBudget: number;
}
export interface GcSummary {
  minor: number;
  major: number;
  /** Sum of the pauses' wall durations, ms. */
  totalMs: number;
  maxMs: number;
}

export class Trace {
  private readonly threadNames = new Map<string, string>();
  constructor(private readonly events: TraceEvent[]) {
    for (const e of events) if (e.ph === 'M' && e.name === 'thread_name' && e.args?.name) this.threadNames.set(`${e.pid}:${e.tid}`, e.args.name);
  }

  /** The renderer process that runs an AudioWorklet (the page under test). */
  private rendererPid(): number {
    for (const [key, name] of this.threadNames) if (name === THREAD.audioWorklet) return Number(key.split(':')[0]);
    throw new Error('trace holds no AudioWorklet thread: is the page running audio?');
  }

  private onThread(thread: string): TraceEvent[] {
    const pid = this.rendererPid();
    return this.events.filter((e) => e.pid === pid && this.threadNames.get(`${e.pid}:${e.tid}`) === thread);
  }

  /** Wall durations of `process()` calls of the worklet module whose url contains `module`. */
  processTimes(module: string): DurationSummary {
    const ds = this.onThread(THREAD.audioWorklet)
      .filter((e) => e.name === 'FunctionCall' && e.ph === 'X' && e.args?.data?.functionName === 'process' && (e.args.data.url ?? '').includes(module))
      .map((e) => (e.dur ?? 0) / 1000);
    return summarise(ds);
  }

  /** Garbage-collection pauses (MinorGC / MajorGC) on one thread of the page's renderer. */
  gc(thread: string): GcSummary {
    const pauses = this.onThread(thread).filter((e) => e.ph === 'X' && (e.name === 'MinorGC' || e.name === 'MajorGC'));
    const ms = pauses.map((e) => (e.dur ?? 0) / 1000);
    return {
      minor: pauses.filter((e) => e.name === 'MinorGC').length,
      major: pauses.filter((e) => e.name === 'MajorGC').length,
      totalMs: round(ms.reduce((a, b) => a + b, 0)),
      maxMs: round(Math.max(0, ...ms)),
    };
  }
}

export function summarise(values: number[]): DurationSummary {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? round(s[Math.min(s.length - 1, Math.floor(q * s.length))]!) : 0);
  return { count: s.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1), overBudget: s.filter((x) => x > QUANTUM_MS).length };
}

export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Trace `browser` (whose page is `page`) while `during` runs. */
export async function traced(browser: Browser, page: Page, categories: string[], during: () => Promise<void>): Promise<Trace> {
  await browser.startTracing(page, { categories });
  try {
    await during();
  } catch (err) {
    await browser.stopTracing().catch(() => {});
    throw err;
  }
  const buf = await browser.stopTracing();
  const json = JSON.parse(buf.toString('utf8')) as { traceEvents: TraceEvent[] };
  return new Trace(json.traceEvents);
}
