// M2E — mouth-to-ear latency through the real OS audio path (Node side). The bench starts its own
// PulseAudio with null devices and an Xvfb display (bench/m2e/rig.ts); a click train played into
// the microphone and the speaker at once lands in the speaker's recording twice, directly and
// through the browser, and the onset gap is the mouth-to-ear time. Set-ups, each a fresh browser
// process, measured alternately in one sound-server session: A (Web Audio straight through, the
// floor), B1/B2 (two worklets and a FIFO, in one AudioContext or two: the floor of any worklet
// chain), W (plain WebRTC media), C (two Tutti processes through the UI) with default settings and
// at the smallest manual depth whose sustained tone plays with no glitch.
// (Over 300 lines: one round's alternating set-ups share the rig, the recordings and the report rows.)

import { DEFAULT_DEPTH, MAX_DEPTH, MIN_DEPTH } from '../../src/shared/constants.ts';
import { startServer } from '../../tests/support/server.ts';
import { busyPercent, cpuSnapshot } from '../lib/app.ts';
import { waitForQuietHost } from '../../scripts/host-steal.ts';
import { MAX_RETAKES, PEAK_SECONDS, RETAKE_PEAK_PERCENT, StealWatch } from '../m2e/steal-watch.ts';
import type { M2eConfig } from '../lib/config.ts';
import { serveBenchPages } from '../lib/pages.ts';
import { launchOnRig } from '../../tests/support/browsers.ts';
import { measureClicks, measureTone, type ClickMeasurement } from '../m2e/measure.ts';
import type { FifoCounters, PathInfo } from '../m2e/m2e-protocol.ts';
import { playAndRecord, recordClicks, sleep, startServerLoop, uploadSignal, type ClickRecording, type Signal } from '../m2e/record.ts';
import { summarise, type M2eRound, type M2eSummaryRow } from '../m2e/report.ts';
import type { TargetRow } from '../m2e/targets.ts';
import { rigUnavailable, startRig, type Rig } from '../../tests/support/audio-rig.ts';
import { CLICKS, clickTrain, tone } from '../m2e/signals.ts';
import { TONE_HZ } from '../m2e/tone.ts';
import { toneVerdict, type ToneCounts, type ToneVerdict } from '../m2e/tone-verdict.ts';
import { appFiguresDuring, joinPair, setReceiverDepth, type AppFigures, type TuttiPair } from '../m2e/tutti-pair.ts';

/** Recording kept after the signal ends, ms: beyond the 600 ms copy window of the last click. */
const TAIL_MS = 300;
const TONE_LEVEL = 0.5;
/** Depths tried upward from the automatic one for a first tone the playout plays clean before giving up. */
const CONFIRM_TRIES = 4;
/** B's FIFO fill, quanta: what issue 9 measured the two-clock floor with. */
export const B_PREFILL = 3;

export type SetupName = 'rig loop' | 'A' | 'B1' | 'B2' | 'W' | 'C default' | 'C settled' | 'C clean depth' | 'C clean settled' | 'C depth auto' | `C depth ${number}`;

export interface M2eMeasurement extends ClickMeasurement {
  setup: SetupName;
  /** 1-based round; null for the self-check and the depth sweep (one join for every depth). */
  round: number | null;
  /** C only: the receiver's manual depth, or 'auto'. */
  depth: number | 'auto' | null;
  /** C only: what the receiving app showed during the recording. */
  app: AppFigures | null;
  /** A, B and W: what the page's audio path reported. */
  info: PathInfo | null;
  /** B: the FIFO's underruns and overflows during the recording. */
  fifo: FifoCounters | null;
  machineBusyPercent: number;
  /**
   * The share of this virtual machine's CPU its host took during the measurement (/proc/stat's
   * steal), over all of it and over its worst PEAK_SECONDS; null where it cannot be read
   * (bench/m2e/steal-watch.ts). A measurement with a burst is taken again.
   */
  hostStealPercent: number | null;
  hostStealPeakPercent: number | null;
}

/**
 * One depth of the sweep: what its sustained tone showed (ToneCounts: the recording's dips and
 * jumps, the app's counters, the speaker's dropouts, our output's stalls) and the verdicts on it
 * (ToneVerdict; the sweep walks by `playoutClean`).
 */
export interface M2eToneStep extends ToneCounts, ToneVerdict {
  depth: number;
  /** The host's steal over the tone (M2eMeasurement.hostStealPercent, hostStealPeakPercent). */
  hostStealPercent: number | null;
  hostStealPeakPercent: number | null;
}

export interface M2eToneCheck {
  setup: 'A';
  seconds: number;
  dips: number;
  jumps: number;
}

export interface M2eResult {
  /** Why the scenario did not run (missing programs), or null. */
  skipped: string | null;
  config: M2eConfig;
  /** The sound server's own mic → speaker loop, to show what the rig itself measures. */
  selfCheck: M2eMeasurement | null;
  /** The sweep's short tone through A (no Tutti): glitches the rig and the browser's own I/O leave, normally none. */
  toneCheck: M2eToneCheck | null;
  measurements: M2eMeasurement[];
  sweep: M2eToneStep[];
  /** Smallest manual depth the sweep visited whose tone was clean, nothing heard and nothing counted; null if none (or no sweep). */
  smallestCleanDepth: number | null;
  /**
   * Smallest manual depth whose tone the playout played clean (M2eToneStep.playoutClean), the
   * depth "C clean depth" and "C clean settled" are measured at; null if none (or no sweep).
   */
  smallestPlayoutCleanDepth: number | null;
  rounds: M2eRound[];
  summary: M2eSummaryRow[];
  /** Issue 9's targets judged on this run (bench/m2e/targets.ts). */
  targets: TargetRow[];
  /** Measurements and tones taken again because the host took the CPU during them (unlessStolen). */
  discarded: (M2eMeasurement | M2eToneStep)[];
  seconds: number;
}

export function emptyM2eResult(config: M2eConfig): M2eResult {
  return { skipped: null, config, selfCheck: null, toneCheck: null, measurements: [], sweep: [], smallestCleanDepth: null, smallestPlayoutCleanDepth: null, rounds: [], summary: [], targets: [], discarded: [], seconds: 0 };
}

/** Fills `out` as it goes (a failure keeps what was measured); `out.skipped` says why it did not run. */
export async function runM2e(cfg: M2eConfig, log: (s: string) => void, out: M2eResult): Promise<void> {
  const why = rigUnavailable();
  if (why) {
    out.skipped = why;
    log(`m2e skipped: ${why}`);
    return;
  }
  const t0 = Date.now();
  const rig = await startRig(log);
  const opened: { close(): Promise<void> }[] = [];
  try {
    const pages = await serveBenchPages();
    opened.push(pages);
    const server = await startServer();
    opened.push(server);
    const spec = { ...CLICKS, clicks: cfg.clicks };
    const clicks = await uploadSignal(rig, 'clicks', clickTrain(spec));
    const tones = cfg.sweep
      ? {
          check: await uploadSignal(rig, 'tone-check', tone(cfg.toneCheckSeconds, TONE_HZ, TONE_LEVEL), 1),
          confirm: await uploadSignal(rig, 'tone-confirm', tone(cfg.confirmSeconds, TONE_HZ, TONE_LEVEL), 1),
        }
      : null;
    const run: Run = { rig, cfg, clicks, pagesUrl: pages.url, serverUrl: server.url, rooms: 0 };

    log('m2e: self-check, the sound server\'s own mic → speaker loop');
    const stopLoop = await startServerLoop(rig);
    try {
      out.selfCheck = await timed('rig loop', null, null, async () => ({ m: measureClicks(await record(run), cfg.clicks, spec.periodS) }));
    } finally {
      await stopLoop();
    }

    if (tones) {
      log('m2e: self-check, the short tone through A (the browser alone)');
      out.toneCheck = await toneThroughA(run, tones.check);
      await sweepDepth(run, tones.confirm, log, out);
      summarise(out);
    }

    const setups: SetupName[] = [
      'A',
      ...(cfg.floorIsolators ? ['B1' as const, 'B2' as const] : []),
      'W',
      'C default',
      ...(cfg.settledSeconds > 0 ? ['C settled' as const] : []),
      ...(out.smallestPlayoutCleanDepth === null ? [] : ['C clean depth' as const]),
      ...(out.smallestPlayoutCleanDepth === null || cfg.settledSeconds <= 0 ? [] : ['C clean settled' as const]),
    ];
    for (let round = 1; round <= cfg.rounds; round++) {
      // Rotate the order each round, so no set-up always follows the same one.
      const order = [...setups.slice((round - 1) % setups.length), ...setups.slice(0, (round - 1) % setups.length)];
      for (const setup of order) {
        log(`m2e round ${round}/${cfg.rounds}: ${setup}${setup === 'C clean depth' || setup === 'C clean settled' ? ` (${out.smallestPlayoutCleanDepth})` : ''}`);
        out.measurements.push(await unlessStolen(`round ${round}/${cfg.rounds}: ${setup}`, () => measureSetup(run, setup, round, out.smallestPlayoutCleanDepth), (m) => out.discarded.push(m), log));
        summarise(out);
      }
    }
  } finally {
    for (const o of opened.reverse()) await o.close();
    await rig.close();
    out.seconds = Math.round((Date.now() - t0) / 1000);
    summarise(out);
  }
}

interface Run {
  rig: Rig;
  cfg: M2eConfig;
  clicks: Signal;
  pagesUrl: string;
  serverUrl: string;
  /** Rooms used so far: every join gets a fresh room. */
  rooms: number;
}

/** The click train at both ends (the microphone's sink and the speaker), `leadMs` of the room recorded first. */
function record(run: Run, leadMs?: number): Promise<ClickRecording> {
  return recordClicks(run.rig, run.clicks, TAIL_MS, leadMs);
}

async function timed(setup: SetupName, round: number | null, depth: M2eMeasurement['depth'], fn: () => Promise<{ m: ClickMeasurement; app?: AppFigures; info?: PathInfo; fifo?: FifoCounters }>): Promise<M2eMeasurement> {
  const c0 = cpuSnapshot();
  const watch = new StealWatch().start();
  try {
    const { m, app, info, fifo } = await fn();
    const steal = watch.stop();
    return { setup, round, depth, ...m, app: app ?? null, info: info ?? null, fifo: fifo ?? null, machineBusyPercent: busyPercent(c0, cpuSnapshot()), hostStealPercent: steal?.meanPercent ?? null, hostStealPeakPercent: steal?.peakPercent ?? null };
  } finally {
    watch.stop();
  }
}

/**
 * `measure` again, after a quiet window, while the host took RETAKE_PEAK_PERCENT or more of the CPU
 * over PEAK_SECONDS of it and `spoilt` says the burst can have changed it (at most MAX_RETAKES
 * times; the last one stands). What was taken again goes to `discard` (M2eResult.discarded: kept
 * in the results and counted in the report).
 */
async function unlessStolen<T extends { hostStealPeakPercent: number | null }>(what: string, measure: () => Promise<T>, discard: (m: T) => void, log: (s: string) => void, spoilt: (m: T) => boolean = () => true): Promise<T> {
  let m = await measure();
  for (let k = 0; k < MAX_RETAKES && (m.hostStealPeakPercent ?? 0) >= RETAKE_PEAK_PERCENT && spoilt(m); k++) {
    log(`m2e ${what}: the host took ${m.hostStealPeakPercent} % of the CPU over ${PEAK_SECONDS} s of it; measured again after a quiet window`);
    discard(m);
    await waitForQuietHost(2);
    m = await measure();
  }
  return m;
}

async function measureSetup(run: Run, setup: SetupName, round: number, cleanDepth: number | null): Promise<M2eMeasurement> {
  const { cfg } = run;
  switch (setup) {
    case 'A':
    case 'W':
      return timed(setup, round, null, async () => {
        const b = await launchOnRig(run.rig, { sink: 'spk', source: 'mic' });
        try {
          await b.page.goto(`${run.pagesUrl}/m2e/index.html`);
          const info = await b.page.evaluate((w) => (w ? window.__m2eWebRtc() : window.__m2eDirect()), setup === 'W');
          await sleep(cfg.settleSeconds * 1000);
          return { m: measureClicks(await record(run), cfg.clicks, CLICKS.periodS), info };
        } finally {
          await b.close();
        }
      });
    case 'B1':
    case 'B2':
      return timed(setup, round, null, async () => {
        const b = await launchOnRig(run.rig, { sink: 'spk', source: 'mic' });
        try {
          await b.page.goto(`${run.pagesUrl}/m2e/index.html`);
          const info = await b.page.evaluate(([contexts, prefill]) => window.__m2eWorklets(contexts, prefill), [setup === 'B1' ? 1 : 2, B_PREFILL] as const);
          await sleep(cfg.settleSeconds * 1000);
          await b.page.evaluate(() => window.__m2eFifoReset());
          const m = measureClicks(await record(run), cfg.clicks, CLICKS.periodS);
          return { m, info, fifo: await b.page.evaluate(() => window.__m2eFifoCounters()) };
        } finally {
          await b.close();
        }
      });
    case 'C settled':
    case 'C clean settled': {
      // What a musician hears after a minute and a half in the room: the automatic depth (or the
      // smallest clean manual one, set at the join) once the devices' rhythm has shown itself
      // (workers/depth-controller.ts, "Recurring steps", "Slow lateness"), with the app's glitches
      // counted over the last minute before and during the recording.
      const depth = setup === 'C clean settled' ? cleanDepth! : 'auto';
      return timed(setup, round, depth, async () => {
        const pair = await joinPair(run.rig, run.serverUrl, `m2e-${process.pid}-${++run.rooms}`);
        try {
          if (depth !== 'auto') await setReceiverDepth(pair, depth);
          await sleep((cfg.settledSeconds - cfg.settledWindowSeconds) * 1000);
          // Both ends recorded over the whole window: the devices' clock rates over a minute.
          const { result, app } = await appFiguresDuring(pair, () => record(run, cfg.settledWindowSeconds * 1000));
          return { m: measureClicks(result, cfg.clicks, CLICKS.periodS), app };
        } finally {
          await pair.close();
        }
      });
    }
    default: {
      const depth = setup === 'C clean depth' ? cleanDepth! : 'auto';
      return timed(setup, round, depth, async () => {
        const pair = await joinPair(run.rig, run.serverUrl, `m2e-${process.pid}-${++run.rooms}`);
        try {
          if (depth !== 'auto') await setReceiverDepth(pair, depth);
          await sleep(cfg.settleSeconds * 1000);
          const { result, app } = await appFiguresDuring(pair, () => record(run));
          return { m: measureClicks(result, cfg.clicks, CLICKS.periodS), app };
        } finally {
          await pair.close();
        }
      });
    }
  }
}

/**
 * One join. The depth the automatic mode chose there is the starting point: the receiver's manual
 * depth is set to it and its long tone must play clean as far as the playout goes (else the next
 * depth up is tried, up to `CONFIRM_TRIES` times); from there it steps down, one long tone per
 * depth, until the playout glitches. The walk goes by `playoutClean`, not `clean`: on this rig the
 * output device drops out every minute or so with no Tutti code in the path (B2 alone), so a
 * minute with nothing heard is luck at any depth, while the playout's own glitches are what the
 * depth decides. Both smallest depths are kept. Short tones do not decide it: a 10 s tone was
 * clean at depths whose 60 s tone then underran (the devices' late buffer comes every ~20 s), so
 * every depth is tried for the full length.
 */
async function sweepDepth(run: Run, confirm: Signal, log: (s: string) => void, out: M2eResult): Promise<void> {
  const { cfg } = run;
  const pair = await joinPair(run.rig, run.serverUrl, `m2e-${process.pid}-${++run.rooms}`);
  try {
    await sleep(cfg.settleSeconds * 1000);
    const auto = await timed('C depth auto', null, 'auto', async () => {
      const { result, app } = await appFiguresDuring(pair, () => record(run));
      return { m: measureClicks(result, cfg.clicks, CLICKS.periodS), app };
    });
    out.measurements.push(auto);
    const start = Math.min(MAX_DEPTH, Math.max(MIN_DEPTH, Math.round(auto.app?.depth ?? DEFAULT_DEPTH)));
    log(`m2e depth sweep: one join, from the automatic depth ${start} (${auto.app?.depth ?? 'not shown'}), ${cfg.confirmSeconds} s tone per depth`);
    const visit = async (depth: number): Promise<M2eToneStep> => {
      await setReceiverDepth(pair, depth);
      await sleep(cfg.settleSeconds * 1000);
      out.measurements.push(await timed(`C depth ${depth}`, null, depth, async () => {
        const { result, app } = await appFiguresDuring(pair, () => record(run));
        return { m: measureClicks(result, cfg.clicks, CLICKS.periodS), app };
      }));
      // A tone that glitched while the host took the CPU is played again (a clean one stands: the
      // burst can only have added glitches).
      const step = await unlessStolen(`depth ${depth} tone`, () => toneStep(run, pair, confirm, depth), (t) => out.discarded.push(t), log, (t) => !t.clean);
      out.sweep.push(step);
      const verdict = step.clean ? 'clean' : step.playoutClean ? 'played clean, heard the speaker drop out' : 'not clean';
      log(`m2e depth ${depth}: ${cfg.confirmSeconds} s tone ${verdict}${step.clean ? '' : ` (${describe(step)})`}`);
      if (step.clean && (out.smallestCleanDepth === null || depth < out.smallestCleanDepth)) out.smallestCleanDepth = depth;
      return step;
    };
    let clean: number | null = null;
    for (let i = 0, depth = start; i < CONFIRM_TRIES && depth <= MAX_DEPTH && clean === null; i++, depth++) {
      if ((await visit(depth)).playoutClean) clean = depth;
    }
    if (clean === null) return;
    // Below a depth found unclean on the way up nothing is tried again.
    if (clean === start) while (clean > MIN_DEPTH && (await visit(clean - 1)).playoutClean) clean--;
    out.smallestPlayoutCleanDepth = clean;
  } finally {
    await pair.close();
  }
}

async function toneThroughA(run: Run, signal: Signal): Promise<M2eToneCheck> {
  const b = await launchOnRig(run.rig, { sink: 'spk', source: 'mic' });
  try {
    await b.page.goto(`${run.pagesUrl}/m2e/index.html`);
    await b.page.evaluate(() => window.__m2eDirect());
    await sleep(run.cfg.settleSeconds * 1000);
    const g = measureTone(await playAndRecord(run.rig, signal, 'micsink', TAIL_MS));
    return { setup: 'A', seconds: Math.round(g.seconds * 10) / 10, dips: g.dips, jumps: g.jumps };
  } finally {
    await b.close();
  }
}

async function toneStep(run: Run, pair: TuttiPair, signal: Signal, depth: number): Promise<M2eToneStep> {
  // Into micsink only: a direct copy of the same sine in the recording would add to the browser's
  // copy with a phase-dependent level, and a dropout of the copy could even raise the sum.
  const watch = new StealWatch().start();
  const { result, app } = await appFiguresDuring(pair, () => playAndRecord(run.rig, signal, 'micsink', TAIL_MS)).finally(() => watch.stop());
  const steal = watch.stop();
  const g = measureTone(result);
  const counted = { underruns: app.underruns, trimmed: app.trimmed, late: app.late, lost: app.lost, speakerDropouts: app.speakerDropouts, outputStalls: app.outputStalls, outputStalledMs: app.outputStalledMs };
  const { clean, playoutClean } = toneVerdict({ seconds: g.seconds, dips: g.dips, jumps: g.jumps, ...counted });
  return { depth, seconds: Math.round(g.seconds * 10) / 10, dips: g.dips, jumps: g.jumps, ...counted, clean, playoutClean, hostStealPercent: steal?.meanPercent ?? null, hostStealPeakPercent: steal?.peakPercent ?? null };
}

function describe(s: M2eToneStep): string {
  return `${s.dips} dips, ${s.jumps} jumps, app: ${s.underruns} underruns, ${s.trimmed} trimmed, ${s.late} late, ${s.lost} lost, ${s.speakerDropouts ?? '?'} speaker dropouts, ${s.outputStalls} output stalls (${s.outputStalledMs} ms), host steal ${s.hostStealPercent ?? '?'} % (${s.hostStealPeakPercent ?? '?'} % at worst)${s.seconds === 0 ? ', no tone recorded' : ''}`;
}
