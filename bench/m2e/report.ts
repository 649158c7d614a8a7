// The mouth-to-ear scenario's figures (Node): per-round differences to the floor A, one summary
// row per set-up, and the tables `npm run bench` prints.

import { QUANTUM_MS } from '../../src/shared/constants.ts';
import type { M2eMeasurement, M2eResult } from '../scenarios/m2e.ts';
import { oneWayPerClick } from './one-way-per-click.ts';
import { spread } from './spread.ts';
import { PEAK_SECONDS, RETAKE_PEAK_PERCENT } from './steal-watch.ts';
import { issue9Targets, rigDriftPpm } from './targets.ts';

export interface M2eRound {
  round: number;
  /** Median onset gap of each set-up in this round, ms. */
  aMs: number | null;
  b1Ms: number | null;
  b2Ms: number | null;
  wMs: number | null;
  cMs: number | null;
  cSettledMs: number | null;
  cCleanMs: number | null;
  cCleanSettledMs: number | null;
  b1MinusAMs: number | null;
  b2MinusAMs: number | null;
  wMinusAMs: number | null;
  cMinusAMs: number | null;
  cSettledMinusAMs: number | null;
  cCleanMinusAMs: number | null;
  cCleanSettledMinusAMs: number | null;
}

export interface M2eSummaryRow {
  setup: string;
  /** Measurements (rounds, or 1 for a sweep depth). */
  n: number;
  /** Median of the measurements' medians, and their range, ms. */
  medianMs: number | null;
  minMs: number | null;
  maxMs: number | null;
  /** Over every click of every measurement, ms. */
  clickP10Ms: number | null;
  clickP90Ms: number | null;
  missing: number;
  doubled: number;
  strays: number;
  /** Median over rounds of (this − A in the same round); sweep depths: their median − A's median. */
  minusAMs: number | null;
  /** C: what the receiving app showed (medians over the measurements). */
  appOneWayMs: number | null;
  appAddedP50Ms: number | null;
  appDepth: number | null;
  appUnderruns: number | null;
  appTrimmed: number | null;
  /** C: the receiver's speaker dropouts, summed (null: none of its measurements could read them). */
  appSpeakerDropouts: number | null;
  /** B: the FIFO's underruns and overflows, summed. */
  fifoUnderruns: number | null;
  fifoOverflows: number | null;
}

/** One decimal; `|| 0` so a difference that rounds to zero prints as 0, not -0. */
const r1 = (x: number | null | undefined): number | null => (x === null || x === undefined ? null : Math.round(x * 10) / 10 || 0);
const med = (xs: (number | null | undefined)[]): number | null => r1(spread(xs.map((x) => x ?? null))?.median);
const sub = (a: number | null | undefined, b: number | null | undefined): number | null => (a === null || a === undefined || b === null || b === undefined ? null : r1(a - b));

/** Fills `rounds` and `summary` from the measurements so far (called after each one). */
export function summarise(r: M2eResult): void {
  const inRound = (setup: string, round: number) => r.measurements.find((m) => m.setup === setup && m.round === round);
  const roundNumbers = [...new Set(r.measurements.flatMap((m) => (m.round === null ? [] : [m.round])))].sort((a, b) => a - b);
  r.rounds = roundNumbers.map((round) => {
    const [a, b1, b2, w, c, cs, cc, ccs] = (['A', 'B1', 'B2', 'W', 'C default', 'C settled', 'C clean depth', 'C clean settled'] as const).map((s) => r1(inRound(s, round)?.medianMs));
    return {
      round,
      aMs: a!,
      b1Ms: b1!,
      b2Ms: b2!,
      wMs: w!,
      cMs: c!,
      cSettledMs: cs!,
      cCleanMs: cc!,
      cCleanSettledMs: ccs!,
      b1MinusAMs: sub(b1, a),
      b2MinusAMs: sub(b2, a),
      wMinusAMs: sub(w, a),
      cMinusAMs: sub(c, a),
      cSettledMinusAMs: sub(cs, a),
      cCleanMinusAMs: sub(cc, a),
      cCleanSettledMinusAMs: sub(ccs, a),
    };
  });
  const aMedian = med(r.measurements.filter((m) => m.setup === 'A').map((m) => m.medianMs));
  const groups = new Map<string, M2eMeasurement[]>();
  for (const m of [...(r.selfCheck ? [r.selfCheck] : []), ...r.measurements]) {
    const key = m.setup === 'C clean depth' || m.setup === 'C clean settled' ? `${m.setup} (${m.depth})` : m.round === null && m.setup.startsWith('C depth') ? `${m.setup} (sweep, one join)` : m.setup;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  r.summary = [...groups].map(([setup, ms]) => {
    const medians = spread(ms.map((m) => m.medianMs));
    const clicks = spread(ms.flatMap((m) => m.gapsMs));
    const perRound = ms.flatMap((m) => {
      if (m.round === null || m.setup === 'A') return [];
      const a = inRound('A', m.round)?.medianMs;
      return [sub(m.medianMs, a)];
    });
    const minusA = ms[0]!.setup === 'A' || ms[0]!.setup === 'rig loop' ? null : ms[0]!.round === null ? sub(medians?.median, aMedian) : med(perRound);
    const apps = ms.flatMap((m) => (m.app ? [m.app] : []));
    const fifos = ms.flatMap((m) => (m.fifo ? [m.fifo] : []));
    return {
      setup,
      n: ms.length,
      medianMs: r1(medians?.median),
      minMs: r1(medians?.min),
      maxMs: r1(medians?.max),
      clickP10Ms: r1(clicks?.p10),
      clickP90Ms: r1(clicks?.p90),
      missing: sum(ms.map((m) => m.missing)),
      doubled: sum(ms.map((m) => m.doubled)),
      strays: sum(ms.map((m) => m.strays)),
      minusAMs: minusA,
      appOneWayMs: med(apps.map((a) => a.oneWayMs)),
      appAddedP50Ms: med(apps.map((a) => a.addedP50Ms)),
      appDepth: med(apps.map((a) => a.depth)),
      appUnderruns: apps.length ? sum(apps.map((a) => a.underruns)) : null,
      appTrimmed: apps.length ? sum(apps.map((a) => a.trimmed)) : null,
      appSpeakerDropouts: apps.some((a) => a.speakerDropouts !== null) ? sum(apps.map((a) => a.speakerDropouts ?? 0)) : null,
      fifoUnderruns: fifos.length ? sum(fifos.map((f) => f.underruns)) : null,
      fifoOverflows: fifos.length ? sum(fifos.map((f) => f.overflows)) : null,
    };
  });
  r.targets = issue9Targets(r);
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

const range = (lo: number | null, hi: number | null) => (lo === null || hi === null ? '–' : lo === hi ? `${lo}` : `${lo}–${hi}`);

export function printM2e(r: M2eResult): void {
  if (r.skipped) {
    console.log(`\nM2E mouth-to-ear through the real audio path: SKIPPED, ${r.skipped}`);
    return;
  }
  console.log(`\nM2E mouth-to-ear through the real audio path (PulseAudio null devices, headed Chromium under Xvfb), ${r.config.rounds} round(s) of ${r.config.clicks} clicks, ${r.seconds} s:`);
  console.log('median = median over measurements of each one\'s median click gap; range = of those medians; clicks p10–p90 = every click; − A = median over rounds of (set-up − A in the same round)');
  console.table(r.summary.map((s) => ({
    'set-up': s.setup,
    n: s.n,
    'median ms': s.medianMs,
    'range ms': range(s.minMs, s.maxMs),
    'clicks p10–p90 ms': range(s.clickP10Ms, s.clickP90Ms),
    'missing/doubled': `${s.missing}/${s.doubled}`,
    '− A ms': s.minusAMs,
    'app one-way ms': s.appOneWayMs,
    'app added p50 ms': s.appAddedP50Ms,
    'app depth': s.appDepth,
    'underruns/trimmed': s.appUnderruns !== null ? `${s.appUnderruns}/${s.appTrimmed} (app)${s.appSpeakerDropouts === null ? '' : `, speaker ${s.appSpeakerDropouts}`}` : s.fifoUnderruns !== null ? `${s.fifoUnderruns}/${s.fifoOverflows} overflows (FIFO)` : '',
  })));
  if (r.rounds.length) {
    console.log('\nM2E per round (median click gap of each set-up, ms; each a fresh browser process):');
    const b = r.config.floorIsolators;
    console.table(r.rounds.map((x) => ({
      round: x.round,
      A: x.aMs,
      ...(b ? { B1: x.b1Ms, B2: x.b2Ms } : {}),
      W: x.wMs,
      'C default': x.cMs,
      ...(r.config.settledSeconds > 0 ? { 'C settled': x.cSettledMs } : {}),
      'C clean depth': x.cCleanMs,
      ...(r.config.settledSeconds > 0 ? { 'C clean settled': x.cCleanSettledMs } : {}),
      ...(b ? { 'B1 − A': x.b1MinusAMs, 'B2 − A': x.b2MinusAMs } : {}),
      'W − A': x.wMinusAMs,
      'C − A': x.cMinusAMs,
      ...(r.config.settledSeconds > 0 ? { 'C settled − A': x.cSettledMinusAMs } : {}),
      'C clean − A': x.cCleanMinusAMs,
      ...(r.config.settledSeconds > 0 ? { 'C clean settled − A': x.cCleanSettledMinusAMs } : {}),
    })));
  }
  const cs = r.measurements.filter((m) => m.app);
  if (cs.length) {
    console.log(`\nM2E what the receiving Tutti app showed during each C measurement (rig drift: the microphone's device clock against the speaker's, from the two recordings, the truth the app's drift figure is held against; counters over the recording; for C settled and C clean settled over the last ${r.config.settledWindowSeconds} s and the recording, after ${r.config.settledSeconds - r.config.settledWindowSeconds} s in the room; depth: at the end, and its range over that window):`);
    console.table(cs.map((m) => ({
      'set-up': m.setup,
      round: m.round ?? 'sweep',
      'gap ms': m.medianMs,
      'within-run ms': range(m.minMs, m.maxMs),
      'slope ms/s': m.slopeMsPerS,
      depth: `${m.app!.depth}${m.app!.adaptive ? ' auto' : ''} (${r1((m.app!.depth ?? 0) * QUANTUM_MS)} ms)${m.app!.depthMin !== m.app!.depthMax ? `, ${m.app!.depthMin}–${m.app!.depthMax}` : ''}`,
      'fill avg/min': `${m.app!.fillAvg}/${m.app!.fillMin}`,
      'added p50/p99 ms': `${m.app!.addedP50Ms}/${m.app!.addedP99Ms}`,
      'one-way ms': m.app!.oneWayMs,
      'one-way stat − gap ms': m.app!.oneWayStatMs === null || m.medianMs === null ? null : r1(m.app!.oneWayStatMs - m.medianMs),
      'per click ms': perClick(m),
      // Clicks heard in a second with a figure (none in our output's first 12 s, OUTPUT_CLOCK_SETTLE_S).
      'clicks with a figure': m.heardAtMs && m.app!.oneWaySeconds ? oneWayPerClick(m.heardAtMs, m.gapsMs, m.app!.oneWaySeconds).clicks : null,
      'rtt ms': m.app!.rttMs,
      'drift ppm': m.app!.driftPpm === null || m.app!.driftMinPpm === m.app!.driftMaxPpm ? m.app!.driftPpm : `${m.app!.driftPpm} (${m.app!.driftMinPpm}…${m.app!.driftMaxPpm})`,
      'rig drift ppm': r1(rigDriftPpm(m)),
      'underruns/trimmed/late/lost': `${m.app!.underruns}/${m.app!.trimmed}/${m.app!.late}/${m.app!.lost}`,
      'before it': beforeWindow(m),
      'speaker dropouts': m.app!.speakerDropouts === null ? '?' : `${m.app!.speakerDropouts} (${m.app!.speakerDropoutMs} ms)`,
      'output stalls': m.app!.outputStalls === undefined ? '?' : `${m.app!.outputStalls} (${m.app!.outputStalledMs} ms)`,
      'sender dropped': m.app!.senderDropped,
      'sender stalls': m.app!.senderOutputStalls === undefined ? '?' : `${m.app!.senderOutputStalls} (${m.app!.senderOutputStalledMs} ms)`,
      'busy %': m.machineBusyPercent,
      'steal % (worst 5 s)': stealText(m),
    })));
  }
  if (cs.length) {
    const within = (xs: (number | null)[]) => `${xs.filter((x) => x !== null && Math.abs(x) <= 5).length} of ${xs.filter((x) => x !== null).length}`;
    const joins = cs.filter((m) => m.setup === 'C default' && m.app!.beforeWindow);
    const glitchyJoins = joins.filter((m) => { const b = m.app!.beforeWindow!; return b.underruns + b.trimmed + b.late + b.lost > 0; });
    if (joins.length) console.log(`(before it: underruns/trimmed/late/lost from the stream's start to the window's first stats message; for C default the join's first second or two, where our output loses time under the join's load, bench/m2e/segments/start-up.ts: ${glitchyJoins.length} of ${joins.length} C default joins had a glitch there)`);
    console.log(`(one-way stat − gap: the median of the window's per-second p50s against the median click gap; per click: the median over clicks of each one's gap against the p50 of the second it was heard in, bench/m2e/one-way-per-click.ts. Within ±5 ms: ${within(cs.map((m) => (m.app!.oneWayStatMs === null || m.medianMs === null ? null : m.app!.oneWayStatMs - m.medianMs)))} by medians, ${within(cs.map(perClick))} per click)`);
  }
  const glitchy = cs.filter((m) => m.app!.glitchSeconds?.length);
  if (glitchy.length) {
    console.log(`\nM2E the seconds with a glitch in those windows (s since the window began; the depth controller's state in quanta then: target, the level held, the lowest low point, the next second's, the relief; the playout rate; the drift shown; the receiver's speaker dropouts and our output's stalls over this second and the one before, and the ms the stalls lost: a trim beside a stall is the backlog the stall left going):`);
    console.table(glitchy.flatMap((m) => m.app!.glitchSeconds.map((g) => ({
      'set-up': m.setup,
      round: m.round ?? 'sweep',
      depth: m.depth,
      s: g.t,
      'underruns/trimmed/late': `${g.underruns}/${g.trimmed}/${g.late}`,
      target: g.target,
      held: g.held,
      min: g.min,
      'min next s': g.nextMin ?? null,
      relief: g.relief,
      rate: g.rate,
      'drift ppm': g.driftPpm,
      'speaker dropouts': g.speakerDropouts ?? '?',
      'output stalls': g.outputStalls === undefined ? '?' : `${g.outputStalls} (${g.outputStalledMs} ms)`,
    }))));
  }
  if (r.sweep.length) {
    const depthMs = (d: number | null) => (d === null ? 'none' : `${d} (${r1(d * QUANTUM_MS)} ms)`);
    console.log(`\nM2E depth sweep (sustained ${r.config.confirmSeconds} s tone per depth into the sender's microphone; glitches in the recording and in the app's counters): smallest clean depth ${depthMs(r.smallestCleanDepth)}; smallest the playout played clean ${depthMs(r.smallestPlayoutCleanDepth)} (the app counted no glitch but the trim of a stall's backlog, and every dip or jump heard can be the receiver's output's own: its speaker dropouts, which a worklet page here has with no Tutti code, BENCHMARKS "The floor under a clean 60 s tone", and our output's stalls; C clean depth and C clean settled are measured there)`);
    console.table(r.sweep.map((s) => ({ depth: s.depth, 'tone s': s.seconds, dips: s.dips, jumps: s.jumps, underruns: s.underruns, trimmed: s.trimmed, late: s.late, lost: s.lost, 'speaker dropouts': s.speakerDropouts ?? '?', 'output stalls': `${s.outputStalls ?? '?'} (${s.outputStalledMs ?? '?'} ms)`, 'steal % (worst 5 s)': stealText(s), clean: s.clean, 'playout clean': s.playoutClean })));
  }
  const rig = r.selfCheck;
  if (rig) console.log(`\nM2E rig self-check (the sound server's own mic → speaker loop, 5 ms): median ${rig.medianMs} ms, within the run ${range(rig.minMs, rig.maxMs)} ms, ${rig.missing} missing, ${rig.doubled} doubled; dating p90 ${rig.datingP90Ms} ms`);
  const dated = r.measurements.flatMap((m) => (m.datingP90Ms === null ? [] : [m.datingP90Ms]));
  const lat = [...new Set(r.measurements.map((m) => `${m.mouthSinkLatencyMs ?? '?'}/${m.speakerSinkLatencyMs ?? '?'}`))];
  if (dated.length) console.log(`M2E wall-clock dating of the recordings (bench/m2e/dating.ts): chunk delay p90 ${r1(Math.min(...dated))}–${r1(Math.max(...dated))} ms; sink latencies micsink/spk ${lat.join(', ')} ms`);
  if (r.toneCheck) console.log(`M2E tone self-check through A (no Tutti): ${r.toneCheck.seconds} s analysed, ${r.toneCheck.dips} dips, ${r.toneCheck.jumps} jumps`);
  if (r.targets.length) {
    const few = r.rounds.length < 5 ? ` (${r.rounds.length} round${r.rounds.length === 1 ? '' : 's'}: the issue asks for medians over at least 5, \`npm run bench -- --m2e\`)` : '';
    console.log(`\nM2E issue 9's targets on this run${few} (bench/m2e/targets.ts; "at the floor": above the target, but no higher than B2 − A, the same path with no network and no Tutti code; for glitches, only trims of what our output's stalls left):`);
    console.table(r.targets);
  }
  if (r.discarded.length) {
    console.log(`M2E taken again because the host took ${RETAKE_PEAK_PERCENT} % or more of the CPU over ${PEAK_SECONDS} s of them (bench/m2e/steal-watch.ts; kept in the results as "discarded"): ${r.discarded.map((d) => `${'setup' in d ? `${d.setup}${d.round === null ? '' : ` round ${d.round}`}` : `the depth ${d.depth} tone`} (${stealText(d)})`).join(', ')}`);
  }
  const odd = [...(r.selfCheck ? [r.selfCheck] : []), ...r.measurements].filter((m) => m.directMissing > 0);
  if (odd.length) console.log(`M2E rig warning: ${odd.length} recording(s) lacked direct clicks (the rig's own playback failed): ${odd.map((m) => `${m.setup} round ${m.round ?? '-'}`).join(', ')}`);
}

/** The host's steal over a measurement, and over its worst PEAK_SECONDS ('?' where not read: runs before 2026-12-06). */
function stealText(m: { hostStealPercent?: number | null; hostStealPeakPercent?: number | null }): string {
  return m.hostStealPercent === null || m.hostStealPercent === undefined ? '?' : `${m.hostStealPercent} (${m.hostStealPeakPercent ?? '?'})`;
}

/** The glitches counted before a window began (null for runs before 2026-11-30). */
function beforeWindow(m: M2eMeasurement): string | null {
  const b = m.app?.beforeWindow;
  return b ? `${b.underruns}/${b.trimmed}/${b.late}/${b.lost}` : null;
}

/** The one-way figure against the gap click by click (null where the measurement has no dated clicks or seconds: runs before 2026-11-29). */
function perClick(m: M2eMeasurement): number | null {
  if (!m.heardAtMs || !m.app?.oneWaySeconds) return null;
  return oneWayPerClick(m.heardAtMs, m.gapsMs, m.app.oneWaySeconds).medianMs;
}
