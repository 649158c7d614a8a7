// The room's metronome as every thread sees it (issue 12, item 2): its state in the room document
// (settings key METRONOME_KEY), the check that turns what a member wrote into a state or nothing,
// the beat arithmetic on the shared clock, and tap tempo. Pure functions; the page writes and reads
// the state (src/room/session.ts), the network worker schedules the beats at our speaker
// (workers/metronome-schedule.ts), the playback worklet renders the clicks (worklets/click-track.ts).
//
// Times are on the room's shared clock (workers/clock-sync.ts), ms. Beat 0 is the first beat of
// the count-in (or of bar 1 without one); beat n sounds at startMs + n × 60000 / bpm, in leader
// mode that much earlier by each member's own advance (see `advanceMs`).

import { median } from './median.ts';

/** Room settings key of the metronome. */
export const METRONOME_KEY = 'metronome';

export const MIN_BPM = 30;
export const MAX_BPM = 300;
export const MAX_BEATS_PER_BAR = 12;
export const MAX_COUNT_IN_BARS = 2;
/** A start is this far ahead on the shared clock: every member's worker has it well before beat 0. */
export const START_LEAD_MS = 1500;

/**
 * together: every member hears beat n at the same shared-clock instant.
 * leader: the leader hears beat n then; every other member hears it earlier by their measured
 * one-way delay to the leader, so what they play on their beat reaches the leader on the leader's.
 */
export type MetronomeMode = 'together' | 'leader';

export interface MetronomeState {
  bpm: number;
  /** Beats per bar (the meter's top figure). */
  beatsPerBar: number;
  /** The first beat of each bar sounds higher and louder. */
  accent: boolean;
  /** Whole bars counted in before bar 1 (shown as the count-in). */
  countInBars: number;
  mode: MetronomeMode;
  /** leader mode: the leader's client id. */
  leader: number | null;
  /** Shared-clock ms of beat 0 while running; null when stopped. */
  startMs: number | null;
}

export const DEFAULT_METRONOME: MetronomeState = { bpm: 100, beatsPerBar: 4, accent: true, countInBars: 1, mode: 'together', leader: null, startMs: null };

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** What a member wrote into the room document, as a state; null if it is not one (it is then ignored). */
export function parseMetronome(v: unknown): MetronomeState | null {
  if (typeof v !== 'object' || v === null) return null;
  const m = v as Record<string, unknown>;
  const bpm = m['bpm'];
  const beats = m['beatsPerBar'];
  const countIn = m['countInBars'];
  if (!isNum(bpm) || bpm < MIN_BPM || bpm > MAX_BPM) return null;
  if (!isNum(beats) || !Number.isInteger(beats) || beats < 1 || beats > MAX_BEATS_PER_BAR) return null;
  if (!isNum(countIn) || !Number.isInteger(countIn) || countIn < 0 || countIn > MAX_COUNT_IN_BARS) return null;
  if (typeof m['accent'] !== 'boolean') return null;
  const mode = m['mode'];
  if (mode !== 'together' && mode !== 'leader') return null;
  const leader = m['leader'];
  if (mode === 'leader' && !(isNum(leader) && Number.isInteger(leader))) return null;
  const start = m['startMs'];
  if (start !== null && !isNum(start)) return null;
  return { bpm, beatsPerBar: beats, accent: m['accent'], countInBars: countIn, mode, leader: mode === 'leader' ? (leader as number) : null, startMs: start as number | null };
}

/** Tempo as typed (a number of beats per minute, one decimal kept), or an error to show. */
export function checkBpm(text: string): { bpm: number } | { error: string } {
  const x = Number(text.trim());
  if (!Number.isFinite(x) || text.trim() === '') return { error: 'Tempo: type a number of beats per minute.' };
  if (x < MIN_BPM || x > MAX_BPM) return { error: `Tempo: ${MIN_BPM} to ${MAX_BPM} beats per minute.` };
  return { bpm: Math.round(x * 10) / 10 };
}

/** ms between beats. */
export function beatMs(bpm: number): number {
  return 60_000 / bpm;
}

/** Shared-clock ms at which beat `n` sounds for a member whose advance is `advanceMs` (0 in together mode and for the leader). */
export function beatTimeMs(m: MetronomeState, n: number, advanceMs: number): number {
  return (m.startMs ?? 0) + n * beatMs(m.bpm) - advanceMs;
}

/** Where beat `n` falls: in the count-in (bar ≤ 0) or bar 1 onward, and its beat in the bar (1-based). */
export function beatPosition(m: MetronomeState, n: number): { bar: number; beat: number; countIn: boolean } {
  const bar0 = Math.floor(n / m.beatsPerBar);
  const bar = bar0 - m.countInBars + 1;
  return { bar, beat: n - bar0 * m.beatsPerBar + 1, countIn: bar <= 0 };
}

/** Is beat `n` accented (the first of its bar, with accents on)? */
export function isAccented(m: MetronomeState, n: number): boolean {
  return m.accent && ((n % m.beatsPerBar) + m.beatsPerBar) % m.beatsPerBar === 0;
}

/** Taps further apart than this start a new tempo. */
export const TAP_RESET_MS = 2000;
/** Intervals of the latest taps that make the tempo. */
export const TAP_INTERVALS = 6;

/**
 * Tap tempo: the taps' times (ms, oldest first) as beats per minute, one decimal, from the median
 * interval of the latest run of taps (a gap over TAP_RESET_MS starts a new run); null before two
 * taps, or outside the metronome's range.
 */
export function tapTempo(taps: readonly number[]): number | null {
  let first = taps.length - 1;
  while (first > 0 && taps[first]! - taps[first - 1]! <= TAP_RESET_MS) first--;
  const run = taps.slice(Math.max(first, taps.length - 1 - TAP_INTERVALS));
  if (run.length < 2) return null;
  const bpm = Math.round((60_000 / median(run.slice(1).map((t, i) => t - run[i]!))) * 10) / 10;
  return bpm >= MIN_BPM && bpm <= MAX_BPM ? bpm : null;
}
