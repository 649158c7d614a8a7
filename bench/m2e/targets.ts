// Issue 9's targets judged on one m2e run (Node, pure): each target, the run's figure for it, and
// a verdict, so a run says by itself whether Tutti met them. Where a target lies below what the
// browser and the sound server leave (the issue's own escape: "prove it with a set-up that isolates
// it"), the isolating set-up's figure from the same run stands beside it: B2, the microphone through
// two worklets and a FIFO in two AudioContexts with no network and no Tutti code; and for the
// glitch target, our output's own stalls.

import type { M2eMeasurement, M2eResult } from '../scenarios/m2e.ts';
import { oneWayPerClick } from './one-way-per-click.ts';
import { spread } from './spread.ts';
import { stallBacklog } from './tone-verdict.ts';

export type TargetVerdict = 'met' | 'not met' | 'at the floor' | 'no data';

export interface TargetRow {
  target: string;
  /** The run's figure, as a short text with its parts. */
  figure: string;
  verdict: TargetVerdict;
}

/** C − A at the default, ms: median over rounds. */
export const DEFAULT_MAX_MS = 15;
/** C − A at the smallest clean manual depth, ms. */
export const MANUAL_MAX_MS = 10;
/** (W − A) − (C − A) in every round, ms. */
export const W_MARGIN_MS = 40;
/** The automatic depth's end values over all joins: within ±1 quantum of one value. */
export const DEPTH_SPAN_QUANTA = 2;
/** The floor's own scatter from one page start to the next, ms (±10): C − A across rounds may span this much. */
export const SPREAD_MS = 20;
/** The app's one-way figure against the measured gap, ms. */
export const ONE_WAY_MS = 5;
/** The drift shown against the rig's devices, ppm. */
export const DRIFT_PPM = 30;

const r1 = (x: number) => Math.round(x * 10) / 10 || 0;
const med = (xs: (number | null)[]) => spread(xs)?.median ?? null;
const list = (xs: (number | null)[]) => xs.map((x) => (x === null ? '–' : r1(x))).join(', ');

/** The rig's drift (microphone's device against the speaker's) from a measurement's two recordings, ppm. */
export function rigDriftPpm(m: M2eMeasurement): number | null {
  if (m.mouthRatePpm === null || m.speakerRatePpm === null) return null;
  return ((1 + m.mouthRatePpm * 1e-6) / (1 + m.speakerRatePpm * 1e-6) - 1) * 1e6;
}

export function issue9Targets(r: M2eResult): TargetRow[] {
  const rows: TargetRow[] = [];
  const rounds = r.rounds;
  const b2MinusA = med(rounds.map((x) => x.b2MinusAMs));
  const floor = b2MinusA === null ? '' : `; the floor, B2 − A: ${r1(b2MinusA)}`;

  const cMinusA = rounds.map((x) => x.cMinusAMs);
  const cMed = med(cMinusA);
  rows.push({
    target: `C default − A ≤ ${DEFAULT_MAX_MS} ms (median over rounds)`,
    figure: cMed === null ? '–' : `${r1(cMed)} (${list(cMinusA)})`,
    verdict: cMed === null ? 'no data' : cMed <= DEFAULT_MAX_MS ? 'met' : 'not met',
  });

  const depth = r.smallestPlayoutCleanDepth;
  const cleanMinusA = rounds.map((x) => x.cCleanMinusAMs);
  const cleanMed = med(cleanMinusA);
  const strict = depth !== null && r.smallestCleanDepth === depth ? 'clean' : 'played clean, the speaker dropped out';
  rows.push({
    target: `C − A ≤ ${MANUAL_MAX_MS} ms at the smallest manual depth whose 60 s tone plays clean`,
    figure: cleanMed === null || depth === null ? `no such depth${floor}` : `${r1(cleanMed)} at ${depth} (${strict}; ${list(cleanMinusA)})${floor}`,
    verdict: cleanMed === null ? 'no data' : cleanMed <= MANUAL_MAX_MS ? 'met' : b2MinusA !== null && cleanMed <= b2MinusA ? 'at the floor' : 'not met',
  });

  const margins = rounds.flatMap((x) => (x.wMinusAMs === null || x.cMinusAMs === null ? [] : [x.wMinusAMs - x.cMinusAMs]));
  rows.push({
    target: `C − A below W − A by ≥ ${W_MARGIN_MS} ms in every round`,
    figure: margins.length ? list(margins) : '–',
    verdict: !margins.length ? 'no data' : margins.every((m) => m >= W_MARGIN_MS) ? 'met' : 'not met',
  });

  const joins = r.measurements.filter((m) => (m.setup === 'C default' || m.setup === 'C settled') && m.app);
  const autoDepths = joins.flatMap((m) => (m.app!.adaptive && m.app!.depth !== null ? [m.app!.depth] : []));
  const span = autoDepths.length ? Math.max(...autoDepths) - Math.min(...autoDepths) : null;
  rows.push({
    target: 'the automatic depth settles within ±1 quantum of one value on every join',
    figure: autoDepths.length ? autoDepths.join(', ') : '–',
    verdict: span === null ? 'no data' : span <= DEPTH_SPAN_QUANTA ? 'met' : 'not met',
  });

  const count = (k: 'underruns' | 'trimmed' | 'late' | 'lost' | 'senderDropped') => joins.reduce((s, m) => s + m.app![k], 0);
  const glitches = { underruns: count('underruns'), trimmed: count('trimmed'), late: count('late'), lost: count('lost'), dropped: count('senderDropped') };
  const stalls = joins.reduce((s, m) => s + m.app!.outputStalls, 0);
  const total = glitches.underruns + glitches.trimmed + glitches.late + glitches.lost + glitches.dropped;
  // A trim no larger than the backlog our output's stalls left (the sweep's "played clean" rule,
  // bench/m2e/tone-verdict.ts) undoes a gap the receiver's own output made: the sound server and
  // the browser's output path, which drop out here with no Tutti code in the path (BENCHMARKS.md,
  // "The floor under a clean 60 s tone").
  // An underrun is never excused by the sender's output stalls: its sends do not run on that clock
  // (it reads the microphone through MediaStreamTrackProcessor in its network worker), so they
  // are shown beside the glitches as evidence only.
  const stallsOnly = joins.every((m) => m.app!.underruns + m.app!.late + m.app!.lost + m.app!.senderDropped === 0 && m.app!.trimmed <= stallBacklog(m.app!.outputStalls, m.app!.outputStalledMs));
  const senderStalls = joins.reduce((s, m) => s + (m.app!.senderOutputStalls ?? 0), 0);
  rows.push({
    target: 'no underrun, trim, late or lost frame, no sender drop at the default (C default and C settled windows)',
    figure: joins.length ? `${glitches.underruns}/${glitches.trimmed}/${glitches.late}/${glitches.lost}, sender ${glitches.dropped}, in ${joins.length} windows; our output stalled ${stalls} times, the sender's ${senderStalls}` : '–',
    verdict: !joins.length ? 'no data' : total === 0 ? 'met' : stallsOnly ? 'at the floor' : 'not met',
  });

  const cs = cMinusA.filter((x): x is number => x !== null);
  const aAbs = rounds.flatMap((x) => (x.aMs === null ? [] : [x.aMs]));
  const cSpan = cs.length ? Math.max(...cs) - Math.min(...cs) : null;
  rows.push({
    target: `C default − A across rounds within the floor's ±10 ms (a span of ≤ ${SPREAD_MS} ms)`,
    figure: cSpan === null ? '–' : `${r1(Math.min(...cs))} to ${r1(Math.max(...cs))} (${r1(cSpan)})${aAbs.length ? `; A itself ${r1(Math.min(...aAbs))} to ${r1(Math.max(...aAbs))}` : ''}`,
    verdict: cSpan === null ? 'no data' : cSpan <= SPREAD_MS ? 'met' : 'not met',
  });

  // Click by click where the clicks are dated (bench/m2e/one-way-per-click.ts): each against the
  // figure of the second it was heard in. The window's median figure against its median gap
  // compares two samples of a delay that moved within the window (a settled join's depth growing).
  const oneWay = r.measurements.flatMap((m) => {
    if (!m.app) return [];
    const perClick = m.heardAtMs && m.app.oneWaySeconds.length ? oneWayPerClick(m.heardAtMs, m.gapsMs, m.app.oneWaySeconds).medianMs : null;
    if (perClick !== null) return [perClick];
    return m.app.oneWayStatMs !== null && m.medianMs !== null ? [m.app.oneWayStatMs - m.medianMs] : [];
  });
  const oneWayIn = oneWay.filter((d) => Math.abs(d) <= ONE_WAY_MS).length;
  rows.push({
    target: `the app's one-way figure within ±${ONE_WAY_MS} ms of the measured gap (every C window, click by click)`,
    figure: oneWay.length ? `${oneWayIn} of ${oneWay.length} (${r1(Math.min(...oneWay))} to ${r1(Math.max(...oneWay))})` : '–',
    verdict: !oneWay.length ? 'no data' : oneWayIn === oneWay.length ? 'met' : 'not met',
  });

  const settled = r.measurements.filter((m) => m.setup === 'C settled' && m.app?.driftPpm !== null && m.app?.driftPpm !== undefined && rigDriftPpm(m) !== null);
  const driftOff = settled.map((m) => m.app!.driftPpm! - rigDriftPpm(m)!);
  const driftIn = driftOff.filter((d) => Math.abs(d) <= DRIFT_PPM).length;
  rows.push({
    target: `the drift shown within ±${DRIFT_PPM} ppm of the rig's (C settled joins)`,
    figure: driftOff.length ? `${driftIn} of ${driftOff.length} (${list(driftOff)})` : '–',
    verdict: !driftOff.length ? 'no data' : driftIn === driftOff.length ? 'met' : 'not met',
  });
  return rows;
}
