// The app's one-way figure against the measured gap, click by click (Node, pure). The stat is a
// per-second p50 of every frame's one-way delay (PeerStats.oneWayMs); the gap is one click's. In a
// join whose delay moves within the recording (the passing bumps of a join's first seconds), the
// median of the window's per-second p50s and the median of its 12 clicks are two samples of a
// moving delay and differed by −3.3 to +2.0 ms where each click's own frame read within 1.6 ms of
// its gap (docs/BENCHMARKS.md, `bench/m2e/segments/main.ts pair`). So each click is compared with
// the stats second it was heard in.

import { median } from '../lib/app.ts';

/**
 * One stats message as the bench read it: the wall time of the reading, ms, and the one-way p50 of
 * the second before it was posted (null: none that second, as in our output's first 12 s).
 */
export interface OneWaySecond {
  at: number;
  p50: number | null;
}

/**
 * A stats message is posted each second and read by the bench within READ_MS after; the frames a
 * second's p50 covers arrived within the second before it was posted, and a click's frame
 * arrived ~ARRIVED_BEFORE_MS before it was heard (its buffer and the output path). So the
 * second a click belongs to is the first one read at or after heard − ARRIVED_BEFORE_MS + READ_MS / 2.
 */
const READ_MS = 250;
const ARRIVED_BEFORE_MS = 50;

/**
 * Median over the clicks of (the one-way p50 of the second each was heard in − its gap), ms, and
 * how many clicks had both; null where none did. `heardAtMs` and `gapsMs` run in click order
 * (null: no copy); `seconds` in reading order.
 */
export function oneWayPerClick(heardAtMs: readonly (number | null)[], gapsMs: readonly (number | null)[], seconds: readonly OneWaySecond[]): { medianMs: number | null; clicks: number } {
  const diffs: number[] = [];
  for (let k = 0; k < gapsMs.length; k++) {
    const heard = heardAtMs[k];
    const gap = gapsMs[k];
    if (heard === null || heard === undefined || gap === null || gap === undefined) continue;
    const s = seconds.find((x) => x.at >= heard - ARRIVED_BEFORE_MS + READ_MS / 2);
    if (s && s.p50 !== null) diffs.push(s.p50 - gap);
  }
  const m = median(diffs);
  return { medianMs: m === null ? null : Math.round(m * 10) / 10, clicks: diffs.length };
}
