// P1, P2, P3 (Tutti side) and P5 in one two-browser session (Node side): two Chromium processes,
// each fed a WAV tone as its microphone, join one room through the real server and UI and stream
// to each other; the scenarios then run one after another on the same pair.
// (Over 300 lines: four scenarios that share one pair's set-up, sampling and teardown.)

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_DEPTH, MAX_DEPTH, QUANTUM_MS } from '../../src/shared/constants.ts';
import type { StatsMessage } from '../../src/shared/worker-protocol.ts';
import { installAudit, readAudit } from '../../tests/support/audit.ts';
import { joinRoom, launchPeer, type PeerBrowser } from '../../tests/support/browsers.ts';
import { startServer } from '../../tests/support/server.ts';
import { writeToneWav } from '../../tests/support/wav.ts';
import { ZERO_TOTALS, add, busyPercent, cpuSnapshot, delta, framesOf, glitches, median, percentOf, sampleStats, setDepth, startStalls, stopStalls, totals, waitForStreams, type Totals } from '../lib/app.ts';
import type { BenchConfig } from '../lib/config.ts';
import { GC_CATEGORIES, THREAD, round, traced, type GcSummary } from '../lib/trace.ts';

export interface P1Row {
  /** Receiving peer (its stream came from the other one). */
  receiver: string;
  seconds: number;
  receivedPerSecond: number;
  late: number;
  lost: number;
  /** Quanta the playout waited on an empty buffer, in the window. */
  underruns: number;
  /** Quanta skipped to cut a backlog, in the window. */
  trimmed: number;
  /** What the listener heard: late + lost + underruns + trimmed. */
  glitches: number;
  depth: number;
  /** Capture timestamp → playout, including the jitter buffer: median over the 0.5 s stats intervals. */
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  /** Worst 0.5 s interval's p99. */
  latencyP99WorstMs: number | null;
  /** The same minus the configured depth (P1's figure). */
  addedP50Ms: number | null;
  addedP99Ms: number | null;
  workerCpuMsPerSecond: number | null;
  mainThreadMessagesPerSecond: number;
  deviceOutputMs: number;
}

export interface P2Step {
  depth: number;
  seconds: number;
  kind: 'probe' | 'confirm';
  late: number;
  lost: number;
  /** Underruns (the engine waits instead of letting frames go late): a glitch all the same. */
  underruns: number;
  /** Trimmed quanta (a backlog cut by a splice): heard as a skip. */
  trimmed: number;
  /** late + lost + underruns + trimmed: 0 is what makes a depth clean. */
  glitches: number;
  /**
   * Median latency p50 per receiver (A, B) in the trial, ms: well above depth + a few ms, the queue
   * holds more than the depth (see docs/BENCHMARKS.md, P1) and the depth figure is optimistic.
   */
  latencyP50Ms: (number | null)[];
}
export interface P2Result {
  /** Smallest depth with 0 glitches (late, lost, underruns, trims) in both directions over the confirmation window; null if none of four confirmations was clean. */
  smallestCleanDepth: number | null;
  smallestCleanDepthMs: number | null;
  confirmSeconds: number;
  steps: P2Step[];
}

export interface StallRow {
  path: string;
  stalls: 'off' | 'on';
  seconds: number;
  /** Frames the senders produced as the receivers saw them: received (own packet or a redundant copy) + late + lost. */
  frames: number;
  late: number;
  lost: number;
  /** Quanta the playout waited on an empty buffer (Tutti); 0 by construction in the baseline, whose queue never waits. */
  underruns: number;
  /** Quanta skipped to cut a backlog (Tutti); 0 by construction in the baseline, whose queue never skips. */
  trimmed: number;
  /** What the listeners heard: late + lost + underruns + trimmed. */
  glitches: number;
  latePercent: number;
  lostPercent: number;
  /** glitches as a share of frames, %. */
  glitchPercent: number;
  /** Depth mode and target depth per receiver at the window's end, e.g. 'auto 8 / 9' or 'fixed 8'. */
  depth: string;
  /** Redundant copies per packet the senders were set to (a congested link's governor may send fewer). */
  redundancy: number;
  /** Frames the senders dropped in the window because the channel's backlog was older than 16 quanta. */
  sendDropped: number;
  /** Whole-machine CPU use during the window, % of all cores. */
  machineBusyPercent: number;
}

export interface P5Row {
  thread: string;
  seconds: number;
  gc: GcSummary;
}

export interface PairResult {
  p1: P1Row[];
  p2: P2Result;
  p3: StallRow[];
  p5: P5Row[];
}

const NAMES = ['A', 'B'] as const;
export const TUTTI_PATH = 'Tutti (DataChannel in worker)';

/** Runs P1, P5, P3 (Tutti), P2 in that order; each result lands in `out` as soon as it is measured. */
export async function runPair(cfg: BenchConfig, log: (s: string) => void, out: Partial<PairResult>): Promise<void> {
  const tmp = join(import.meta.dirname, '..', 'out');
  mkdirSync(tmp, { recursive: true });
  const server = await startServer();
  const peers: PeerBrowser[] = [];
  try {
    const a = await launchPeer({ wav: writeToneWav(join(tmp, 'a.wav'), { leftHz: 440, rightHz: 660, seconds: 5 }) });
    peers.push(a);
    const b = await launchPeer({ wav: writeToneWav(join(tmp, 'b.wav'), { leftHz: 1000, rightHz: 1250, seconds: 5 }) });
    peers.push(b);
    for (const p of peers) await installAudit(p.page);
    await joinRoom(a.page, server.url, 'bench', 'A', { query: '' });
    await joinRoom(b.page, server.url, 'bench', 'B', { query: '' });
    for (const p of peers) await waitForStreams(p.page, 1);
    await a.page.waitForTimeout(2000);

    log(`P1: ${cfg.p1Seconds} s at depth ${DEFAULT_DEPTH}`);
    const { rows: p1, window: p1Window } = await measureP1(peers, cfg.p1Seconds);
    out.p1 = p1;

    log(`P5: tracing GC on B for ${cfg.p5Seconds} s`);
    const trace = await traced(b.browser, b.page, GC_CATEGORIES, () => b.page.waitForTimeout(cfg.p5Seconds * 1000));
    out.p5 = [
      { thread: 'audio worklet (capture + playback)', seconds: cfg.p5Seconds, gc: trace.gc(THREAD.audioWorklet) },
      { thread: 'network worker', seconds: cfg.p5Seconds, gc: trace.gc(THREAD.worker) },
      { thread: 'main thread', seconds: cfg.p5Seconds, gc: trace.gc(THREAD.main) },
    ];

    // One stalled main thread, as in the baseline page (which sends and receives on its one main
    // thread): B's. Both directions count: B receives while stalled, A receives what stalled B sent.
    log(`P3 (Tutti): ${cfg.stall.busyMs} ms main-thread stalls every ${cfg.stall.everyMs} ms on B, ${cfg.p3Seconds} s`);
    const p3 = (out.p3 = [stallRow(TUTTI_PATH, 'off', p1Window.t, p1Window.seconds, p1Window.busy, p1Window.settings)]);
    await startStalls(b.page, cfg.stall.busyMs, cfg.stall.everyMs);
    await a.page.waitForTimeout(1000);
    const stalled = await windowTotals(peers, cfg.p3Seconds);
    await stopStalls(b.page);
    p3.push(stallRow(TUTTI_PATH, 'on', stalled.t, stalled.seconds, stalled.busy, stalled.settings));

    log(`P2: stepping the depth down from ${DEFAULT_DEPTH} (${cfg.p2ProbeSeconds} s probes, ${cfg.p2ConfirmSeconds} s confirmation)`);
    await a.page.waitForTimeout(1000);
    out.p2 = await measureP2(peers, cfg, log);
  } finally {
    await Promise.all(peers.map((p) => p.close()));
    await server.close();
  }
}

/** How a path was set up during a window: P3 compares paths, so each row says what it ran with. */
export interface PathSettings {
  depth: string;
  redundancy: number;
}

export function stallRow(
  path: string,
  stalls: 'off' | 'on',
  t: Pick<Totals, 'received' | 'recovered' | 'late' | 'lost' | 'underruns' | 'trimmed' | 'sendDropped'>,
  seconds: number,
  machineBusyPercent: number,
  settings: PathSettings,
): StallRow {
  const g = glitches(t);
  return {
    path,
    stalls,
    seconds: round(seconds, 1),
    frames: framesOf(t),
    late: t.late,
    lost: t.lost,
    underruns: t.underruns,
    trimmed: t.trimmed,
    glitches: g,
    latePercent: percentOf(t.late, t),
    lostPercent: percentOf(t.lost, t),
    glitchPercent: percentOf(g, t),
    depth: settings.depth,
    redundancy: settings.redundancy,
    sendDropped: t.sendDropped,
    machineBusyPercent,
  };
}

/** Every counter summed over both receivers during a window of `seconds`. */
async function windowTotals(peers: PeerBrowser[], seconds: number): Promise<{ t: Totals; seconds: number; busy: number; latencyP50Ms: (number | null)[]; settings: PathSettings }> {
  const c0 = cpuSnapshot();
  const samples = await Promise.all(peers.map((p) => sampleStats(p.page, seconds * 1000)));
  const latencyP50Ms = samples.map((s) => median(s.all.slice(1).flatMap((m) => (m.peers[0]?.latencyMs ? [m.peers[0].latencyMs.p50] : []))));
  return { ...sumWindows(samples), busy: busyPercent(c0, cpuSnapshot()), latencyP50Ms };
}

function sumWindows(samples: { first: StatsMessage; last: StatsMessage; seconds: number }[]): { t: Totals; seconds: number; settings: PathSettings } {
  let t: Totals = { ...ZERO_TOTALS };
  for (const s of samples) t = add(t, delta(totals(s.first), totals(s.last)));
  const lasts = samples.map((s) => s.last);
  // Both pages join with the default settings, so one page's mode and room redundancy speak for both.
  const settings = {
    depth: `${lasts[0]?.adaptive ? 'auto' : 'manual'} ${lasts.map((m) => m.peers[0]?.depth ?? '?').join(' / ')}`,
    redundancy: lasts[0]?.redundancy ?? 0,
  };
  return { t, seconds: Math.min(...samples.map((s) => s.seconds)), settings };
}

async function measureP1(peers: PeerBrowser[], seconds: number): Promise<{ rows: P1Row[]; window: { t: Totals; seconds: number; busy: number; settings: PathSettings } }> {
  const c0 = cpuSnapshot();
  const auditBefore = await Promise.all(peers.map((p) => readAudit(p.page)));
  const samples = await Promise.all(peers.map((p) => sampleStats(p.page, seconds * 1000)));
  const auditAfter = await Promise.all(peers.map((p) => readAudit(p.page)));
  const outLatency = await Promise.all(
    peers.map((p) =>
      p.page.evaluate(() => {
        const s = (document.querySelector('tutti-app') as unknown as { session?: { engine: { outputLatency(): number } } }).session;
        return s ? s.engine.outputLatency() * 1000 : NaN;
      }),
    ),
  );
  const rows = samples.map((s, i) => {
    const between = s.all.slice(1); // each message covers the 0.5 s before it
    const lat = between.flatMap((m) => (m.peers[0]?.latencyMs ? [m.peers[0].latencyMs] : []));
    const depth = s.last.peers[0]?.depth ?? DEFAULT_DEPTH;
    const p50 = median(lat.map((l) => l.p50));
    const p99 = median(lat.map((l) => l.p99));
    const d = delta(totals(s.first), totals(s.last));
    const added = (x: number | null) => (x === null ? null : round(x - depth * QUANTUM_MS, 2));
    return {
      receiver: NAMES[i]!,
      seconds: round(s.seconds, 1),
      receivedPerSecond: Math.round(d.received / s.seconds),
      late: d.late,
      lost: d.lost,
      underruns: d.underruns,
      trimmed: d.trimmed,
      glitches: glitches(d),
      depth,
      latencyP50Ms: p50,
      latencyP99Ms: p99,
      latencyP99WorstMs: lat.length ? Math.max(...lat.map((l) => l.p99)) : null,
      addedP50Ms: added(p50),
      addedP99Ms: added(p99),
      workerCpuMsPerSecond: median(between.map((m: StatsMessage) => m.workerCpuMsPerSecond)),
      mainThreadMessagesPerSecond: round((auditAfter[i]!.events - auditBefore[i]!.events) / s.seconds, 1),
      deviceOutputMs: round(outLatency[i]!, 2),
    };
  });
  return { rows, window: { ...sumWindows(samples), busy: busyPercent(c0, cpuSnapshot()) } };
}

/**
 * Step the manual depth down (both peers) with short probes until a probe sees a glitch; then
 * confirm the last clean depth over the full window, moving up one quantum at a time while the
 * confirmation sees glitches.
 */
async function measureP2(peers: PeerBrowser[], cfg: BenchConfig, log: (s: string) => void): Promise<P2Result> {
  const steps: P2Step[] = [];
  const trial = async (depth: number, seconds: number, kind: P2Step['kind']): Promise<P2Step> => {
    for (const p of peers) await setDepth(p.page, depth);
    await peers[0]!.page.waitForTimeout(1000); // let the worklets walk to the new depth
    const w = await windowTotals(peers, seconds);
    const step: P2Step = {
      depth,
      seconds: round(w.seconds, 1),
      kind,
      late: w.t.late,
      lost: w.t.lost,
      underruns: w.t.underruns,
      trimmed: w.t.trimmed,
      glitches: glitches(w.t),
      latencyP50Ms: w.latencyP50Ms,
    };
    steps.push(step);
    log(`  depth ${depth} ${kind}: late ${step.late}, lost ${step.lost}, underruns ${step.underruns}, trimmed ${step.trimmed}, latency p50 ${step.latencyP50Ms.join(' / ')} ms`);
    return step;
  };
  let candidate = DEFAULT_DEPTH;
  // Clean = nothing a listener hears: no late or lost frame, no underrun (the engine grows its delay
  // instead of letting frames go late, so at too small a depth the glitches show up there) and no
  // trim (a skip in the audio, whatever caused it).
  const dirty = (s: P2Step) => s.glitches;
  if (dirty(await trial(DEFAULT_DEPTH, cfg.p2ProbeSeconds, 'probe')) === 0) {
    while (candidate > 1 && dirty(await trial(candidate - 1, cfg.p2ProbeSeconds, 'probe')) === 0) candidate--;
  } else {
    while (candidate < MAX_DEPTH && dirty(await trial(++candidate, cfg.p2ProbeSeconds, 'probe')) > 0) {
      // keep going up until a probe is clean
    }
  }
  let clean: number | null = null;
  // At most four confirmations: on a saturated machine no depth may be clean, and the bench must end.
  for (let d = candidate; d <= Math.min(MAX_DEPTH, candidate + 3); d++) {
    if (dirty(await trial(d, cfg.p2ConfirmSeconds, 'confirm')) === 0) {
      clean = d;
      break;
    }
  }
  for (const p of peers) await setDepth(p.page, DEFAULT_DEPTH);
  return { smallestCleanDepth: clean, smallestCleanDepthMs: clean === null ? null : round(clean * QUANTUM_MS, 2), confirmSeconds: cfg.p2ConfirmSeconds, steps };
}
