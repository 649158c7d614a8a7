// Mouth-to-ear onset arithmetic (Node, pure): finds click onsets in a recording of the speaker
// monitor and pairs each direct click with its copy through the browser. No I/O, so the unit
// tests (tests/unit/m2e-onsets.test.ts) can feed it generated recordings.

/** Per-frame magnitude of interleaved s16 PCM: the louder channel, so a copy on either side counts. */
export function frameMagnitude(interleaved: Int16Array, channels: number): Float32Array {
  const frames = Math.floor(interleaved.length / channels);
  const out = new Float32Array(frames);
  for (let f = 0; f < frames; f++) {
    let m = 0;
    for (let c = 0; c < channels; c++) m = Math.max(m, Math.abs(interleaved[f * channels + c]!));
    out[f] = m / 32768;
  }
  return out;
}

/** The largest magnitude in a recording. */
export function peakOf(mag: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < mag.length; i++) if (mag[i]! > max) max = mag[i]!;
  return max;
}

export interface OnsetOptions {
  /** Onset level as a fraction of the recording's maximum (default 0.25). */
  threshold?: number;
  /** Onset level in magnitude units, in place of `threshold` (a copy held to another recording's click). */
  level?: number;
  /** Quiet time below the level that separates two onsets, ms (default 1.5): a 2 ms pulse is one onset. */
  quietMs?: number;
}

/**
 * Frame indices where the magnitude first exceeds `threshold × max` after at least `quietMs` below
 * it. Relative to the recording's own maximum because the direct click sets the scale: a copy well
 * below the direct click's level (a browser path with gain) is reported missing, not guessed at.
 */
export function detectOnsets(mag: ArrayLike<number>, sampleRate: number, opts: OnsetOptions = {}): number[] {
  const max = peakOf(mag);
  if (max === 0) return [];
  const level = opts.level ?? (opts.threshold ?? 0.25) * max;
  const quiet = Math.round(((opts.quietMs ?? 1.5) * sampleRate) / 1000);
  const onsets: number[] = [];
  let lastAbove = -Infinity;
  for (let i = 0; i < mag.length; i++) {
    if (mag[i]! <= level) continue;
    if (i - lastAbove > quiet) onsets.push(i);
    lastAbove = i;
  }
  return onsets;
}

export interface PairOptions {
  /** Spacing of the played clicks, s (the rig plays them exactly 1 s apart). */
  periodS?: number;
  /** A copy is the first onset in [direct + minGapMs, direct + maxGapMs]. */
  minGapMs?: number;
  maxGapMs?: number;
  /** How far a direct click may sit from its predicted place, ms. */
  toleranceMs?: number;
  /** Clicks played; fewer direct clicks found means the recording missed some (a rig failure). */
  expectedClicks?: number;
}

export interface Pairing {
  /** Frame index of each direct click found, in order. */
  direct: number[];
  /** Onset gap per direct click, ms; null where no copy came. */
  gapsMs: (number | null)[];
  /** Direct clicks with no copy in the window. */
  missing: number;
  /** Direct clicks with more than one onset in their window (a copy played twice, or a burst). */
  doubled: number;
  /** Onsets that are neither a direct click nor in any click's window (noise, or a copy > maxGapMs late). */
  strays: number;
  /** `expectedClicks` minus the direct clicks found (0 when not given). */
  directMissing: number;
}

/**
 * Finds the direct click train (the longest chain of onsets one period apart, the earliest on a
 * tie: a steady copy train is just as periodic but always later) and pairs each direct click with
 * the onsets that follow it within the copy window.
 */
export function pairClicks(onsets: readonly number[], sampleRate: number, opts: PairOptions = {}): Pairing {
  const period = (opts.periodS ?? 1) * sampleRate;
  const tol = ((opts.toleranceMs ?? 2) * sampleRate) / 1000;
  const minGap = ((opts.minGapMs ?? 3) * sampleRate) / 1000;
  const maxGap = ((opts.maxGapMs ?? 600) * sampleRate) / 1000;

  let best: number[] = [];
  for (let a = 0; a < onsets.length; a++) {
    const chain = chainFrom(onsets, a, period, tol);
    if (chain.length > best.length) best = chain;
  }
  const direct = best.map((i) => onsets[i]!);
  const isDirect = new Set(best);

  const gapsMs: (number | null)[] = [];
  let missing = 0;
  let doubled = 0;
  const used = new Set<number>();
  for (const d of direct) {
    const inWindow: number[] = [];
    for (let i = 0; i < onsets.length; i++) {
      const o = onsets[i]!;
      if (isDirect.has(i) || o < d + minGap || o > d + maxGap) continue;
      inWindow.push(i);
    }
    for (const i of inWindow) used.add(i);
    if (inWindow.length === 0) {
      missing++;
      gapsMs.push(null);
      continue;
    }
    if (inWindow.length > 1) doubled++;
    gapsMs.push(((onsets[inWindow[0]!]! - d) * 1000) / sampleRate);
  }
  const strays = onsets.length - direct.length - used.size;
  const directMissing = opts.expectedClicks === undefined ? 0 : Math.max(0, opts.expectedClicks - direct.length);
  return { direct, gapsMs, missing, doubled, strays, directMissing };
}

/**
 * Onset indices one period apart starting at `a`. Each found click re-anchors the prediction, so a
 * recording clock a few ppm off still chains; a step with no onset in tolerance keeps predicting
 * (a lone missing direct click does not split the train).
 */
function chainFrom(onsets: readonly number[], a: number, period: number, tol: number): number[] {
  const chain = [a];
  let expect = onsets[a]! + period;
  const last = onsets[onsets.length - 1]!;
  let j = a + 1;
  while (expect <= last + tol) {
    while (j < onsets.length && onsets[j]! < expect - tol) j++;
    if (j < onsets.length && onsets[j]! <= expect + tol) {
      chain.push(j);
      expect = onsets[j]! + period;
      j++;
    } else expect += period;
  }
  return chain;
}

/**
 * Pairs clicks at the mouth with their copies at the speaker when each is in its own recording,
 * both as wall-clock ms on their devices' clocks (bench/m2e/dating.ts): the direct train is the
 * mouth's (its longest chain one period apart), and a click's copy is the first speaker onset
 * `minGapMs`–`maxGapMs` after it. Missing, doubled and strays as in pairClicks.
 */
export function pairAcross(mouthMs: readonly number[], speakerMs: readonly number[], opts: PairOptions = {}): Omit<Pairing, 'direct'> & { directMs: number[] } {
  // The mouth's own chain, with ms as the timeline's unit (pairClicks takes any rate).
  const chain = pairClicks(mouthMs, 1000, { ...opts, maxGapMs: 0, minGapMs: 0 });
  const directMs = chain.direct;
  const minGap = opts.minGapMs ?? 3;
  const maxGap = opts.maxGapMs ?? 600;
  const gapsMs: (number | null)[] = [];
  let missing = 0;
  let doubled = 0;
  const used = new Set<number>();
  for (const d of directMs) {
    const inWindow = speakerMs.flatMap((s, i) => (s >= d + minGap && s <= d + maxGap ? [i] : []));
    for (const i of inWindow) used.add(i);
    if (!inWindow.length) {
      missing++;
      gapsMs.push(null);
      continue;
    }
    if (inWindow.length > 1) doubled++;
    gapsMs.push(Math.min(...inWindow.map((i) => speakerMs[i]!)) - d);
  }
  return { directMs, gapsMs, missing, doubled, strays: speakerMs.length - used.size + chain.strays, directMissing: chain.directMissing };
}
