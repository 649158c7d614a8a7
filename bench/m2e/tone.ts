// Glitches in a recorded sustained tone (Node, pure): dropouts as dips of the envelope, and skipped
// or repeated audio as jumps of the tone's phase. Tutti conceals a missing quantum with a
// prediction that continues a pure tone almost perfectly, so a dip alone would miss an underrun;
// the stream then resumes a quantum later than the prediction, which shows as a phase jump.

/**
 * The rig's tone: 893.25 Hz = 2.382 cycles per 128-frame quantum, so skipping or repeating 1 to 7
 * quanta shifts the phase by at least 0.146 cycle (0.92 rad). At 1 kHz three quanta are exactly
 * 8 cycles and a three-quantum splice would be invisible.
 */
export const TONE_HZ = 893.25;

export interface ToneOptions {
  /** A dip: an envelope block below this fraction of the median envelope (default 0.5). */
  dipRatio?: number;
  /** A jump: a phase step between phase blocks beyond this, radians, after removing the steady rate (default 0.5). */
  jumpRad?: number;
  /** Phase blocks (Hann-windowed), ms, hopped by half (default 10). */
  blockMs?: number;
  /** Ignored at each end of the tone, ms: its fades (default 100). */
  edgeMs?: number;
  /** Flags closer than this merge into one event, ms (default 30). */
  mergeMs?: number;
}

export interface ToneEvent {
  /** Seconds from the start of the recording. */
  atS: number;
  kind: 'dip' | 'jump';
}

export interface ToneGlitches {
  /** Length of the tone that was analysed, s (0: no tone found). */
  seconds: number;
  dips: number;
  jumps: number;
  events: ToneEvent[];
}

/** `x`: one channel, signed, full scale ±1. */
export function toneGlitches(x: ArrayLike<number>, sampleRate: number, hz: number, opts: ToneOptions = {}): ToneGlitches {
  const dipRatio = opts.dipRatio ?? 0.5;
  const jumpRad = opts.jumpRad ?? 0.5;
  const edge = Math.round(((opts.edgeMs ?? 100) * sampleRate) / 1000);
  const merge = ((opts.mergeMs ?? 30) * sampleRate) / 1000;

  // Envelope: the peak of each span of one period (+1 frame), so a sine's blocks all read ≈ its
  // amplitude and any silent quantum (128 frames > one period) holds at least one block near 0.
  const span = Math.ceil(sampleRate / hz) + 1;
  const envelope: number[] = [];
  for (let s = 0; s + span <= x.length; s += span) {
    let m = 0;
    for (let i = s; i < s + span; i++) m = Math.max(m, Math.abs(x[i]!));
    envelope.push(m);
  }
  const loud = quantile(envelope, 0.9) * 0.5;
  const firstBlock = envelope.findIndex((e) => e >= loud);
  let lastBlock = -1;
  for (let b = envelope.length - 1; b >= 0; b--) if (envelope[b]! >= loud) { lastBlock = b; break; }
  if (firstBlock < 0 || loud === 0) return { seconds: 0, dips: 0, jumps: 0, events: [] };
  const from = firstBlock * span + edge;
  const to = (lastBlock + 1) * span - edge;
  if (to <= from) return { seconds: 0, dips: 0, jumps: 0, events: [] };

  const flags: { at: number; kind: 'dip' | 'jump' }[] = [];
  const inside = envelope.slice(Math.ceil(from / span), Math.floor(to / span));
  const level = quantile(inside, 0.5);
  for (let b = Math.ceil(from / span); b < Math.floor(to / span); b++) {
    if (envelope[b]! < dipRatio * level) flags.push({ at: b * span, kind: 'dip' });
  }

  // Phase: a Hann-windowed single-bin DFT per block at absolute time, so a steady tone has a
  // constant step between blocks (0 at the exact frequency, small and steady under a resampler).
  const n = Math.round(((opts.blockMs ?? 10) * sampleRate) / 1000);
  const hop = n >> 1;
  const w = (2 * Math.PI * hz) / sampleRate;
  const phases: { at: number; phi: number }[] = [];
  for (let s = from; s + n <= to; s += hop) {
    let re = 0;
    let im = 0;
    for (let i = 0; i < n; i++) {
      const win = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1));
      const v = x[s + i]! * win;
      re += v * Math.cos(w * (s + i));
      im -= v * Math.sin(w * (s + i));
    }
    phases.push({ at: s + hop, phi: Math.atan2(im, re) });
  }
  // Compare blocks three hops apart: they leave half a block between them, and every instant lies
  // in such a gap for some pair, so a jump is seen whole once instead of split over two steps.
  const steps = phases.slice(SPAN).map((p, i) => wrap(p.phi - phases[i]!.phi));
  const steady = quantile(steps, 0.5);
  steps.forEach((d, i) => {
    if (Math.abs(wrap(d - steady)) > jumpRad) flags.push({ at: (phases[i]!.at + phases[i + SPAN]!.at) / 2, kind: 'jump' });
  });

  // One event per cluster of flags; a dip outranks the phase jumps it causes.
  flags.sort((a, b) => a.at - b.at);
  const events: ToneEvent[] = [];
  let end = -Infinity;
  for (const f of flags) {
    const last = events[events.length - 1];
    if (last && f.at - end <= merge) {
      if (f.kind === 'dip') last.kind = 'dip';
    } else events.push({ atS: f.at / sampleRate, kind: f.kind });
    end = f.at;
  }
  return {
    seconds: (to - from) / sampleRate,
    dips: events.filter((e) => e.kind === 'dip').length,
    jumps: events.filter((e) => e.kind === 'jump').length,
    events,
  };
}

/** Phase blocks between the two compared (see toneGlitches). */
const SPAN = 3;

function wrap(a: number): number {
  return a - 2 * Math.PI * Math.round(a / (2 * Math.PI));
}

function quantile(xs: readonly number[], q: number): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}
