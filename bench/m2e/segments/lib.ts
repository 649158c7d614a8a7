// Shared arithmetic of the segments tools (bench/m2e/segments/main.ts): the click train they play,
// onsets dated on the wall clock, and where the browser dates a context time at the speaker.

import { detectOnsets, frameMagnitude } from '../onsets.ts';
import type { ProbeReport } from '../probe-protocol.ts';
import { CHANNELS, RATE, type ClickSpec } from '../signals.ts';
import { playOf, type TimedRecording } from '../dating.ts';

export const TRAIN: ClickSpec = { clicks: 12, periodS: 1, firstS: 0.5, pulseMs: 2, amplitude: 0.5, tailS: 0.7 };
/** Time in the room (or with the probe running) before a measurement: the m2e bench's C default waits about as long. */
export const SETTLE_MS = Number(process.env['SETTLE_MS'] ?? 20_000);
/** The probe page clicks every half second. */
export const PAGE_PERIOD_S = 0.5;
/** A browser's dating of a click and the truth are paired within this, ms. */
export const PAIR_MS = 200;

export const r2 = (x: number): number => Math.round(x * 100) / 100;

export function med(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** "median (min…max)" of `xs`, ms. */
export function spanOf(xs: readonly number[]): string {
  return xs.length ? `${r2(med(xs))} (${r2(Math.min(...xs))}…${r2(Math.max(...xs))})` : '–';
}

/** Wall-clock ms at which every onset in `r` plays by its sink's clock (bench/m2e/dating.ts playOf). */
export function onsetWalls(r: TimedRecording): number[] {
  return detectOnsets(frameMagnitude(r.samples, CHANNELS), RATE).map((f) => playOf(r, f));
}

export function nearest(xs: readonly number[], x: number): number | null {
  let best: number | null = null;
  for (const v of xs) if (best === null || Math.abs(v - x) < Math.abs(best - x)) best = v;
  return best;
}

/** Where the app dates context time `t` (s) at the speaker: the median offset of the readings of the two seconds before, as workers/speaker-time.ts. */
export function speakerMs(o: ProbeReport['output'], t: number): number | null {
  const offs: number[] = [];
  for (let i = 0; i < o.readContextS.length; i++) {
    const c = o.readContextS[i]!;
    if (c <= t && c > t - 2.05) offs.push(o.readWallMs[i]! - c * 1000);
  }
  return offs.length ? t * 1000 + med(offs) : null;
}

/** Least-squares slope of y on x. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  return sxy / sxx;
}

