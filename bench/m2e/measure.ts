// From a rig recording to the figures of one measurement (Node, pure): the click train's gaps with
// their spread, glitches and drift within the recording, or a tone's glitches.

import { CHANNELS, RATE } from './signals.ts';
import { detectOnsets, frameMagnitude, pairClicks } from './onsets.ts';
import { spread } from './spread.ts';
import { TONE_HZ, toneGlitches, type ToneGlitches } from './tone.ts';

export interface ClickMeasurement {
  /** Onset gap per click, ms (null: no copy), in playing order. */
  gapsMs: (number | null)[];
  medianMs: number | null;
  minMs: number | null;
  maxMs: number | null;
  p10Ms: number | null;
  p90Ms: number | null;
  missing: number;
  doubled: number;
  /** Onsets outside every click's window. */
  strays: number;
  /** Clicks played but not found in the recording (a rig failure, not the browser's). */
  directMissing: number;
  /**
   * Least-squares slope of the gap over the recording, ms per second: a path whose delay creeps
   * (a rate mismatch, a queue that fills) shows here, and a single step (a trim, an underrun) too.
   */
  slopeMsPerS: number | null;
}

export function measureClicks(rec: Int16Array, clicks: number, periodS: number): ClickMeasurement {
  const p = pairClicks(detectOnsets(frameMagnitude(rec, CHANNELS), RATE), RATE, { expectedClicks: clicks, periodS });
  const s = spread(p.gapsMs);
  const r2 = (x: number | null | undefined) => (x === null || x === undefined ? null : Math.round(x * 100) / 100);
  return {
    gapsMs: p.gapsMs.map(r2),
    medianMs: r2(s?.median),
    minMs: r2(s?.min),
    maxMs: r2(s?.max),
    p10Ms: r2(s?.p10),
    p90Ms: r2(s?.p90),
    missing: p.missing,
    doubled: p.doubled,
    strays: p.strays,
    directMissing: p.directMissing,
    slopeMsPerS: r2(slope(p.gapsMs, periodS)),
  };
}

function slope(gaps: readonly (number | null)[], periodS: number): number | null {
  const pts = gaps.flatMap((g, k) => (g === null ? [] : [[k * periodS, g] as const]));
  if (pts.length < 3) return null;
  const mx = pts.reduce((a, [x]) => a + x, 0) / pts.length;
  const my = pts.reduce((a, [, y]) => a + y, 0) / pts.length;
  let num = 0;
  let den = 0;
  for (const [x, y] of pts) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return num / den;
}

/** The tone's glitches in the recording's left channel (the rig plays the same on both). */
export function measureTone(rec: Int16Array): ToneGlitches {
  const left = new Float32Array(rec.length / CHANNELS);
  for (let f = 0; f < left.length; f++) left[f] = rec[f * CHANNELS]! / 32768;
  return toneGlitches(left, RATE, TONE_HZ);
}
