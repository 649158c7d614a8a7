// P4 scale (Node side): one real Tutti receiver (its own Chromium process, joined through the UI)
// and 1, 4, 8, 16, 31 synthetic senders (bench/synth, another Chromium process) that join its
// room over real RTCPeerConnections and send valid wire-format packets at 375/s each. For each
// count: late and lost %, the receiver worker's CPU, and its playback worklet's process() time
// from a CDP trace, against the 2.67 ms render-quantum budget.

import { join } from 'node:path';
import { joinRoom, launchPeer, type PeerBrowser } from '../../tests/support/browsers.ts';
import { startServer } from '../../tests/support/server.ts';
import { writeToneWav } from '../../tests/support/wav.ts';
import { delta, median, percentOf, sampleStats, totals, waitForStreams } from '../lib/app.ts';
import type { BenchConfig } from '../lib/config.ts';
import { serveBenchPages } from '../lib/pages.ts';
import { CALL_CATEGORIES, round, traced, type DurationSummary } from '../lib/trace.ts';

export interface ScaleRow {
  streams: number;
  seconds: number;
  /** Frames per second received, summed over the streams. */
  receivedPerSecond: number;
  late: number;
  lost: number;
  latePercent: number;
  lostPercent: number;
  workerCpuMsPerSecond: number | null;
  /** Playback worklet process() wall time (CDP trace). */
  process: DurationSummary;
  /** Share of process() calls longer than one render quantum (2.67 ms), %. */
  processOverBudgetPercent: number;
  /** Synthetic sender: packets not sent (congested channel or sender timer behind), should be 0. */
  senderDropped: number;
}

export async function runScale(cfg: BenchConfig, log: (s: string) => void): Promise<ScaleRow[]> {
  const server = await startServer();
  const pages = await serveBenchPages();
  const browsers: PeerBrowser[] = [];
  try {
    const receiver = await launchPeer({ wav: writeToneWav(join(import.meta.dirname, '..', 'out', 'r.wav'), { leftHz: 440, rightHz: 660, seconds: 5 }) });
    browsers.push(receiver);
    const synth = await launchPeer();
    browsers.push(synth);
    await joinRoom(receiver.page, server.url, 'scale', 'Receiver', { query: '' });
    await synth.page.goto(`${pages.url}/synth/index.html`);
    const signalUrl = server.url.replace(/^http/, 'ws') + '/signal';
    await synth.page.evaluate(([url, room]) => window.__synthStart(url, room), [signalUrl, 'scale'] as const);

    const rows: ScaleRow[] = [];
    let streams = 0;
    for (const n of cfg.p4Streams) {
      await synth.page.evaluate((k) => window.__synthAdd(k), n - streams);
      streams = n;
      await waitForStreams(receiver.page, n);
      await receiver.page.waitForTimeout(1500);
      const dropped0 = await senderDropped(synth);
      let sampled: Awaited<ReturnType<typeof sampleStats>> | undefined;
      const trace = await traced(receiver.browser, receiver.page, CALL_CATEGORIES, async () => {
        sampled = await sampleStats(receiver.page, cfg.p4Seconds * 1000);
      });
      const w = sampled!;
      const d = delta(totals(w.first), totals(w.last));
      const process = trace.processTimes('playback.worklet');
      if (process.count === 0) throw new Error('the trace holds no playback process() calls');
      const row: ScaleRow = {
        streams: n,
        seconds: round(w.seconds, 1),
        receivedPerSecond: Math.round(d.received / w.seconds),
        late: d.late,
        lost: d.lost,
        latePercent: percentOf(d.late, d),
        lostPercent: percentOf(d.lost, d),
        workerCpuMsPerSecond: median(w.all.slice(1).map((m) => m.workerCpuMsPerSecond)),
        process,
        processOverBudgetPercent: round((process.overBudget / process.count) * 100, 3),
        senderDropped: (await senderDropped(synth)) - dropped0,
      };
      rows.push(row);
      log(`  ${n} streams: ${row.receivedPerSecond} frames/s, late ${row.latePercent} %, worker ${row.workerCpuMsPerSecond} ms/s, process() p99 ${process.p99Ms} ms`);
    }
    return rows;
  } finally {
    await Promise.all(browsers.map((b) => b.close()));
    await pages.close();
    await server.close();
  }
}

async function senderDropped(synth: PeerBrowser): Promise<number> {
  const s = await synth.page.evaluate(() => window.__synthStats());
  return s ? s.congested + s.skipped : 0;
}
