// Band-limited interpolation for the playback worklet's rate steering (drift compensation and
// click-free depth changes): a Kaiser-windowed sinc, TAPS taps, tabulated at PHASES fractional
// positions with linear interpolation between them. Built once per worklet; interpolate()
// allocates nothing. Unit-tested in Node (THD+N in the bench).

import { RESAMPLER_HALF, RESAMPLER_TAPS } from '../src/shared/constants.ts';

/** Kernel length in input frames (defined with the shared position arithmetic in src/shared/constants.ts). */
export const TAPS = RESAMPLER_TAPS;
/** Frames needed before the integer read position (n − HALF + 1 … n + HALF). */
export const HALF = RESAMPLER_HALF;
const PHASES = 512;
const KAISER_BETA = 8.6;
/**
 * Cut-off at Nyquist: the rate never leaves 1 ± 0.5 %, so at most the top 0.5 % of the band can
 * alias, and with a cut-off of exactly 1 the phase-0 kernel is a unit impulse (sinc is zero at
 * every other integer), so the output is continuous where the position passes an integer.
 */
const CUTOFF = 1;

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) * (x / (2 * k));
    sum += term;
    if (term < 1e-12 * sum) break;
  }
  return sum;
}

export class SincTable {
  /** (PHASES + 1) rows of TAPS coefficients; row p is the kernel for fraction p / PHASES. */
  readonly table = new Float32Array((PHASES + 1) * TAPS);

  constructor() {
    const i0b = besselI0(KAISER_BETA);
    for (let p = 0; p <= PHASES; p++) {
      const frac = p / PHASES;
      let sum = 0;
      for (let k = 0; k < TAPS; k++) {
        // Tap k sits at input offset (k − HALF + 1) from the integer position; distance to x:
        const d = k - HALF + 1 - frac;
        const x = Math.PI * CUTOFF * d;
        const sinc = d === 0 ? 1 : Math.sin(x) / x;
        const r = d / HALF;
        const w = Math.abs(r) >= 1 ? 0 : besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / i0b;
        const c = sinc * w;
        this.table[p * TAPS + k] = c;
        sum += c;
      }
      // Unity DC gain at every phase, so a constant stays exactly constant.
      for (let k = 0; k < TAPS; k++) this.table[p * TAPS + k]! /= sum;
    }
  }

  /**
   * Value of the stereo-interleaved signal `src` (frame i at src[2i], src[2i+1]) at fractional frame
   * position `pos`, channel `ch`. Needs frames ⌊pos⌋ − HALF + 1 … ⌊pos⌋ + HALF. An integral `pos`
   * returns the sample itself exactly.
   */
  interpolate(src: Float32Array, pos: number, ch: number): number {
    const n = Math.floor(pos);
    const frac = pos - n;
    if (frac === 0) return src[2 * n + ch]!;
    const fp = frac * PHASES;
    const p = Math.floor(fp);
    const t = fp - p;
    const t0 = p * TAPS;
    const t1 = t0 + TAPS;
    const table = this.table;
    let acc = 0;
    let i = 2 * (n - HALF + 1) + ch;
    for (let k = 0; k < TAPS; k++) {
      const c0 = table[t0 + k]!;
      acc += src[i]! * (c0 + (table[t1 + k]! - c0) * t);
      i += 2;
    }
    return acc;
  }
}
