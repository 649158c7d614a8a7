// `npm run bench`: measures Tutti in headless Chromium on loopback, prints one table per scenario
// and writes bench/results.json. Options: --short (brief, for CI), --long (P2 confirms over 5 min),
// --seconds N (P1 window), --m2e (only the mouth-to-ear scenario), --p4 (only the scaling scenario). Scenarios (docs/BENCHMARKS.md
// says how to read each):
//   wake  how the network worker learns of a captured quantum (three mechanisms, one page)
//   P1    added latency, capture timestamp → playout minus the jitter depth (two browsers)
//   P2    smallest jitter depth with no glitch, stepped down live through the UI (same pair)
//   P3    glitches under 300 ms main-thread stalls: Tutti vs a main-thread DataChannel baseline
//   P4    1…31 synthetic streams into one receiver: glitch %, worker CPU, worklet process() time
//   P5    garbage collections on the audio-worklet thread (CDP trace), with the worker's for comparison
//   m2e   mouth-to-ear through the real OS audio path (PulseAudio + Xvfb, headed): floor, WebRTC, Tutti
//   soak  the signaling hub under a few hundred hostile sockets beside two honest members (Node only)
// A glitch, in every P1–P4 figure, is what a listener hears: late + lost + underruns + trimmed.

import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_REDUNDANCY, QUANTUM_MS } from '../src/shared/constants.ts';
import { parseArgs } from './lib/config.ts';
import { runBaseline } from './scenarios/baseline.ts';
import { TUTTI_PATH, runPair, type P5Row, type PairResult } from './scenarios/pair.ts';
import { runScale, type ScaleRow } from './scenarios/scale.ts';
import { emptyM2eResult, runM2e, type M2eResult } from './scenarios/m2e.ts';
import { printM2e } from './m2e/report.ts';
import { printSoak, runSoak, type SoakResult } from './scenarios/soak.ts';
import { runWake } from './scenarios/wake.ts';
import { printQuality, runQualityBench } from './quality.ts';
import { runFuzzBench, type FuzzBenchResult } from './fuzz.ts';
import type { WakeResult } from './wake/wake-protocol.ts';

const cfg = parseArgs(process.argv.slice(2));
const out = join(import.meta.dirname, 'results.json');
const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
const results: {
  started: string;
  mode: string;
  config: typeof cfg;
  wake?: WakeResult[];
  p1?: PairResult['p1'];
  p2?: PairResult['p2'];
  p3?: PairResult['p3'];
  p4?: ScaleRow[];
  p5?: P5Row[];
  /** Engine quality in Node: concealment SNR, resampler THD+N, drift simulation, residual loss after redundancy. */
  quality?: Record<string, unknown>;
  /** Seeded fuzzing of the receive path: 10^6 cases per mode (10^5 in short mode). */
  fuzz?: Omit<FuzzBenchResult, 'table'>;
  /** The signaling hub under attack: honest relay latency per window, hub RSS over time, counters. */
  soak?: SoakResult;
  /** Mouth-to-ear through the real audio path: A, W, C per round, the depth sweep, in-app figures. */
  m2e?: M2eResult;
  errors: { scenario: string; message: string }[];
} = { started: new Date().toISOString(), mode: cfg.mode, config: cfg, errors: [] };
const save = () => writeFileSync(out, JSON.stringify(results, null, 2));

async function scenario(name: string, fn: () => Promise<void>): Promise<void> {
  if (cfg.only && name !== cfg.only) return;
  try {
    await fn();
  } catch (err) {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    console.error(`\n${name} FAILED: ${message}\n`);
    results.errors.push({ scenario: name, message });
  }
  save();
}

console.log(`Tutti bench (${cfg.mode}) on ${process.platform}, ${cpus().length} cores\n`);

await scenario('wake', async () => {
  log(`wake: ${cfg.wakeSeconds} s per mode`);
  const wake = (results.wake = await runWake(cfg.wakeSeconds));
  console.log('\nWake-up of the network worker per captured quantum (one page, same run):');
  console.table(wake.map((w) => ({ mode: w.mode, 'wakes/s': w.wakesPerSecond, 'quanta/wake': w.quantaPerWake, 'max quanta/wake': w.maxQuantaPerWake, 'gap p50 ms': w.gapP50, 'gap p99 ms': w.gapP99, 'gap max ms': w.gapMax })));
});

await scenario('quality', async () => {
  log('quality: concealment, resampler, drift, redundancy (Node, no browser)');
  results.quality = await runQualityBench({ short: cfg.mode === 'short' });
  printQuality(results.quality, cfg.mode === 'short');
});

await scenario('fuzz', async () => {
  const cases = cfg.mode === 'short' ? 100_000 : 1_000_000;
  log(`fuzz: ${cases} cases per mode (decoder + jitter writer; the network worker's receiver in Node)`);
  const { table, ...r } = await runFuzzBench({ cases });
  results.fuzz = r;
  console.table(table);
  if (!r.ok) throw new Error('fuzzing found failures (see results.json fuzz.modes)');
});

await scenario('soak', async () => {
  try {
    results.soak = await runSoak(cfg.mode === 'short', log);
  } catch (err) {
    results.soak = (err as { result?: SoakResult }).result;
    throw err;
  } finally {
    if (results.soak) printSoak(results.soak);
  }
});

await scenario('pair', async () => {
  const r: Partial<PairResult> = {};
  try {
    await runPair(cfg, log, r);
  } finally {
    Object.assign(results, r);
    printPair(r);
  }
});

await scenario('baseline', async () => {
  // The baseline's sender carries the copies Tutti's did in this run (the room default if P3 did not run).
  const b = await runBaseline(cfg, log, results.p3?.find((r) => r.path === TUTTI_PATH)?.redundancy ?? DEFAULT_REDUNDANCY);
  results.p3 = [...(results.p3 ?? []), ...b.p3];
  results.p5 = [...(results.p5 ?? []), { thread: 'baseline audio worklet (postMessage per quantum)', seconds: cfg.p3Seconds, gc: b.gc }];
  console.log(`\nP3 main-thread stalls (${cfg.stall.busyMs} ms busy loop every ${cfg.stall.everyMs} ms), glitches at the receivers (late + lost + underruns + trimmed):`);
  console.table(results.p3.map((r) => ({
    path: r.path,
    stalls: r.stalls,
    s: r.seconds,
    depth: r.depth,
    red: r.redundancy,
    frames: r.frames,
    late: r.late,
    lost: r.lost,
    underruns: r.underruns,
    trimmed: r.trimmed,
    'glitch %': r.glitchPercent,
    'send dropped': r.sendDropped,
    'machine busy %': r.machineBusyPercent,
  })));
  console.log('\nP5 for comparison, the baseline page without stalls:');
  console.table([gcRow(results.p5[results.p5.length - 1]!)]);
});

await scenario('scale', async () => {
  log(`P4: ${cfg.p4Streams.join(', ')} synthetic streams into one receiver, ${cfg.p4Seconds} s each (traced)`);
  const rows: ScaleRow[] = (results.p4 = []);
  try {
    await runScale(cfg, log, rows);
  } finally {
    printScale(rows);
  }
});

// Skipped (saying why, not failing) where Xvfb or PulseAudio is not installed; about 40 s in --short.
await scenario('m2e', async () => {
  const r = (results.m2e = emptyM2eResult(cfg.m2e));
  log(`m2e: mouth-to-ear through the real audio path, ${cfg.m2e.rounds} round(s)${cfg.m2e.sweep ? ' and a depth sweep' : ''}`);
  try {
    await runM2e(cfg.m2e, log, r);
  } finally {
    printM2e(r);
  }
});

function printScale(rows: ScaleRow[]): void {
  console.log(`\nP4 scale: synthetic streams into one Tutti receiver; playback process() wall time from a CDP trace, budget ${QUANTUM_MS.toFixed(2)} ms:`);
  console.table(rows.map((r) => ({
    streams: r.streams,
    s: r.seconds,
    'recv/s': r.receivedPerSecond,
    'late %': r.latePercent,
    'lost %': r.lostPercent,
    underruns: r.underruns,
    trimmed: r.trimmed,
    'glitch %': r.glitchPercent,
    'worker ms/s': r.workerCpuMsPerSecond,
    'process p50 ms': r.process.p50Ms,
    'process p99 ms': r.process.p99Ms,
    'process max ms': r.process.maxMs,
    '> 2.67 ms %': r.processOverBudgetPercent,
    'offered/s': r.offeredPerSecond,
    'sender dropped': r.senderDropped,
    'machine busy %': r.machineBusyPercent,
  })));
}

function printPair(r: Partial<PairResult>): void {
  if (r.p1) {
    console.log(`\nP1 added latency: two Chromium processes on loopback, depth ${r.p1[0]?.depth} (${((r.p1[0]?.depth ?? 0) * QUANTUM_MS).toFixed(1)} ms); latency = capture timestamp → playout, added = latency − depth:`);
    console.table(r.p1.map((e) => ({
      receiver: e.receiver,
      s: e.seconds,
      'recv/s': e.receivedPerSecond,
      late: e.late,
      lost: e.lost,
      underruns: e.underruns,
      trimmed: e.trimmed,
      glitches: e.glitches,
      'latency p50 ms': e.latencyP50Ms,
      'latency p99 ms': e.latencyP99Ms,
      'added p50 ms': e.addedP50Ms,
      'added p99 ms': e.addedP99Ms,
      'worst p99 ms': e.latencyP99WorstMs,
      'worker ms/s': e.workerCpuMsPerSecond,
      'main msgs/s': e.mainThreadMessagesPerSecond,
      'device out ms': e.deviceOutputMs,
    })));
  }
  if (r.p5) {
    console.log('\nP5 garbage collections on B during a quiet window (CDP trace, V8 MinorGC/MajorGC):');
    console.table(r.p5.map(gcRow));
  }
  if (r.p2) {
    console.log(`\nP2 smallest jitter depth with 0 glitches (late + lost + underruns + trimmed, both directions) over ${r.p2.confirmSeconds} s: ${r.p2.smallestCleanDepth ?? 'none'}${r.p2.smallestCleanDepthMs === null ? '' : ` (${r.p2.smallestCleanDepthMs} ms)`}`);
    console.table(r.p2.steps.map((t) => ({ depth: t.depth, 'depth ms': Math.round(t.depth * QUANTUM_MS * 100) / 100, kind: t.kind, s: t.seconds, late: t.late, lost: t.lost, underruns: t.underruns, trimmed: t.trimmed, glitches: t.glitches, 'latency p50 ms (A / B)': t.latencyP50Ms.join(' / ') })));
  }
}

function gcRow(r: P5Row) {
  return { thread: r.thread, s: r.seconds, minor: r.gc.minor, major: r.gc.major, 'total pause ms': r.gc.totalMs, 'max pause ms': r.gc.maxMs };
}

save();
console.log(`\nwrote ${out}`);
if (results.errors.length) {
  console.error(`${results.errors.length} scenario(s) could not run: ${results.errors.map((e) => e.scenario).join(', ')}`);
  process.exit(1);
}
