// P4 scale (Node side): one real Tutti receiver (its own Chromium process, joined through the UI)
// and 1, 4, 8, 16, 31 synthetic senders (bench/synth, another Chromium process) that join its
// room over real RTCPeerConnections and send valid wire-format packets at 375/s each. For each
// count: glitches (late, lost, underruns, trims) %, the receiver worker's CPU, and its playback worklet's process() time
// from a CDP trace, against the 2.67 ms render-quantum budget.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { joinRoom, launchPeer, type PeerBrowser } from '../../tests/support/browsers.ts';
import { startServer } from '../../tests/support/server.ts';
import { writeToneWav } from '../../tests/support/wav.ts';
import { busyPercent, cpuSnapshot, delta, glitches, median, percentOf, sampleStats, totals, waitForStreams } from '../lib/app.ts';
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
  /** Quanta the receiver's playout waited on an empty buffer, summed over the streams. */
  underruns: number;
  /** Quanta the receiver's playout skipped to cut a backlog, summed over the streams. */
  trimmed: number;
  /** What the listener heard: late + lost + underruns + trimmed. */
  glitches: number;
  latePercent: number;
  lostPercent: number;
  /** glitches as a share of the frames the senders produced (received + late + lost, as the receiver saw them), %. */
  glitchPercent: number;
  workerCpuMsPerSecond: number | null;
  /** Playback worklet process() wall time (CDP trace). */
  process: DurationSummary;
  /** Share of process() calls longer than one render quantum (2.67 ms), %. */
  processOverBudgetPercent: number;
  /** Packets per second the synthetic senders put on their channels, summed. */
  offeredPerSecond: number;
  /** Synthetic sender: packets not sent (congested channel, or its timer more than 64 quanta behind); 0 when the load was offered in full. */
  senderDropped: number;
  /** Whole-machine CPU use during the window, % of all cores: near 100 means the figures show the machine's limit. */
  machineBusyPercent: number;
}

/** Each stream count's row is pushed to `rows` as soon as it is measured. */
export async function runScale(cfg: BenchConfig, log: (s: string) => void, rows: ScaleRow[]): Promise<void> {
  const server = await startServer();
  const pages = await serveBenchPages();
  const browsers: PeerBrowser[] = [];
  try {
    const tmp = join(import.meta.dirname, '..', 'out');
    mkdirSync(tmp, { recursive: true });
    const receiver = await launchPeer({ wav: writeToneWav(join(tmp, 'r.wav'), { leftHz: 440, rightHz: 660, seconds: 5 }) });
    browsers.push(receiver);
    const synth = await launchPeer();
    browsers.push(synth);
    await joinRoom(receiver.page, server.url, 'scale', 'Receiver', { query: '' });
    await synth.page.goto(`${pages.url}/synth/index.html`);
    const signalUrl = server.url.replace(/^http/, 'ws') + '/signal';
    await synth.page.evaluate(([url, room]) => window.__synthStart(url, room), [signalUrl, 'scale'] as const);

    let streams = 0;
    for (const n of cfg.p4Streams) {
      await synth.page.evaluate((k) => window.__synthAdd(k), n - streams);
      const joins = (await synth.page.evaluate(() => window.__synthJoinSeconds)).slice(streams);
      log(`  ${n - streams} member(s) joined in ${joins.reduce((a, x) => a + x, 0).toFixed(1)} s (each: ${joins.map((x) => x.toFixed(1)).join(' ')})`);
      streams = n;
      await waitForStreams(receiver.page, n, 1); // frames from every stream; a saturated machine may not reach 375/s
      await receiver.page.waitForTimeout(1500);
      let sampled: Awaited<ReturnType<typeof sampleStats>> | undefined;
      let sender = { sent: 0, dropped: 0 };
      let busy = 0;
      const trace = await traced(receiver.browser, receiver.page, CALL_CATEGORIES, async () => {
        const s0 = await senderStats(synth);
        const c0 = cpuSnapshot();
        sampled = await sampleStats(receiver.page, cfg.p4Seconds * 1000);
        busy = busyPercent(c0, cpuSnapshot());
        const s1 = await senderStats(synth);
        sender = { sent: s1.sent - s0.sent, dropped: s1.dropped - s0.dropped };
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
        underruns: d.underruns,
        trimmed: d.trimmed,
        glitches: glitches(d),
        latePercent: percentOf(d.late, d),
        lostPercent: percentOf(d.lost, d),
        glitchPercent: percentOf(glitches(d), d),
        workerCpuMsPerSecond: median(w.all.slice(1).map((m) => m.workerCpuMsPerSecond)),
        process,
        processOverBudgetPercent: round((process.overBudget / process.count) * 100, 3),
        offeredPerSecond: Math.round(sender.sent / w.seconds),
        senderDropped: sender.dropped,
        machineBusyPercent: busy,
      };
      rows.push(row);
      log(`  ${n} streams: ${row.receivedPerSecond} frames/s, glitches ${row.glitchPercent} % (late ${row.latePercent} %), worker ${row.workerCpuMsPerSecond} ms/s, process() p99 ${process.p99Ms} ms`);
    }
  } finally {
    await Promise.all(browsers.map((b) => b.close()));
    await pages.close();
    await server.close();
  }
}

async function senderStats(synth: PeerBrowser): Promise<{ sent: number; dropped: number }> {
  const s = await synth.page.evaluate(() => window.__synthStats());
  return s ? { sent: s.sent, dropped: s.congested + s.skipped } : { sent: 0, dropped: 0 };
}
