// P3 baseline (Node side): the main-thread DataChannel design (bench/baseline) in one page, first
// without and then with the same main-thread stalls Tutti faced; the quiet window is also traced
// for garbage collections on its audio thread (P5's point of comparison). Its sender runs with the
// redundancy Tutti ran with in the same run and Tutti's send-queue limit.

import { DEFAULT_DEPTH } from '../../src/shared/constants.ts';
import { MAX_QUEUE_MS } from '../../workers/send-queue.ts';
import { launchPeer } from '../../tests/support/browsers.ts';
import type { BaselineOptions, BaselineSnapshot } from '../baseline/baseline-page.ts';
import { busyPercent, cpuSnapshot, startStalls, stopStalls } from '../lib/app.ts';
import type { BenchConfig } from '../lib/config.ts';
import { serveBenchPages } from '../lib/pages.ts';
import { GC_CATEGORIES, THREAD, traced, type GcSummary } from '../lib/trace.ts';
import { stallRow, type StallRow } from './pair.ts';

export const BASELINE_PATH = 'baseline (DataChannel on main thread)';

/** `redundancy`: the copies per packet Tutti's senders were set to in this run (its P3 rows). */
export async function runBaseline(cfg: BenchConfig, log: (s: string) => void, redundancy: number): Promise<{ p3: StallRow[]; gc: GcSummary }> {
  const pages = await serveBenchPages();
  const peer = await launchPeer();
  try {
    const page = peer.page;
    await page.goto(`${pages.url}/baseline/index.html`);
    // Depth: Tutti's starting and manual default; it stays fixed here (docs/BENCHMARKS.md, P3 baseline, says why).
    const options: BaselineOptions = { depth: DEFAULT_DEPTH, redundancy, maxQueueMs: MAX_QUEUE_MS };
    await page.evaluate((o) => window.__baselineStart(o), options);
    const snap = () => page.evaluate(() => window.__baselineSnapshot());
    const until = Date.now() + 30_000;
    while ((await snap()).counters.played < 375) {
      if (Date.now() > until) throw new Error(`baseline page plays no frames: ${JSON.stringify(await snap())}`);
      await page.waitForTimeout(250);
    }
    await page.waitForTimeout(2000);

    const measure = async (seconds: number): Promise<{ a: BaselineSnapshot; b: BaselineSnapshot; seconds: number; busy: number }> => {
      const c0 = cpuSnapshot();
      const a = await snap();
      const t0 = Date.now();
      await page.waitForTimeout(seconds * 1000);
      await page.waitForTimeout(100); // the counters message of the window's end (every ~50 ms)
      return { a, b: await snap(), seconds: (Date.now() - t0) / 1000, busy: busyPercent(c0, cpuSnapshot()) };
    };
    const counts = (w: { a: BaselineSnapshot; b: BaselineSnapshot }) => {
      const late = w.b.counters.late - w.a.counters.late;
      const missed = w.b.counters.missed - w.a.counters.missed;
      return {
        received: w.b.counters.received - w.a.counters.received,
        recovered: w.b.recovered - w.a.recovered,
        late,
        lost: Math.max(0, missed - late),
        // The queue never waits on an empty buffer nor skips: every missing frame's slot passes
        // (played as silence) and is counted late or lost above.
        underruns: 0,
        trimmed: 0,
        sendDropped: w.b.sendDropped - w.a.sendDropped,
      };
    };
    const settings = { depth: `fixed ${options.depth}`, redundancy };

    log(`P3 (baseline): ${cfg.p3Seconds} s without stalls (traced for GC), then ${cfg.p3Seconds} s with; depth ${options.depth} fixed, redundancy ${redundancy}, send queue ≤ ${options.maxQueueMs.toFixed(1)} ms`);
    let quiet: Awaited<ReturnType<typeof measure>> | undefined;
    const trace = await traced(peer.browser, page, GC_CATEGORIES, async () => {
      quiet = await measure(cfg.p3Seconds);
    });
    await startStalls(page, cfg.stall.busyMs, cfg.stall.everyMs);
    await page.waitForTimeout(1000);
    const stalled = await measure(cfg.p3Seconds);
    await stopStalls(page);
    return {
      p3: [stallRow(BASELINE_PATH, 'off', counts(quiet!), quiet!.seconds, quiet!.busy, settings), stallRow(BASELINE_PATH, 'on', counts(stalled), stalled.seconds, stalled.busy, settings)],
      gc: trace.gc(THREAD.audioWorklet),
    };
  } finally {
    await peer.close();
    await pages.close();
  }
}
