// Page: what a member's device does with the room's metronome (src/shared/metronome.ts): the
// state a start, a stop or a change writes into the room document, and this member's advance in
// leader mode, from the leader's published one-way delay from us (MemberState.quality). Pure
// functions; src/room/session.ts applies them and hands the result to the network worker.

import type { MemberState } from '../shared/signaling-protocol.ts';
import { START_LEAD_MS, beatMs, type MetronomeState } from '../shared/metronome.ts';

/** A running metronome that changes tempo keeps its beat numbers: the change takes effect this far ahead, on a beat. */
export const CHANGE_LEAD_MS = 300;

/** Started now (`sharedNowMs`, the shared clock): beat 0 comes START_LEAD_MS from now, on every member's device. */
export function started(m: MetronomeState, sharedNowMs: number): MetronomeState {
  return { ...m, startMs: Math.round(sharedNowMs + START_LEAD_MS) };
}

export function stopped(m: MetronomeState): MetronomeState {
  return { ...m, startMs: null };
}

/**
 * `m` with tempo `bpm`. While it runs, the first beat at least CHANGE_LEAD_MS ahead keeps its time
 * and number, and the beats after it follow the new tempo: the bar goes on, no count-in again.
 */
export function withTempo(m: MetronomeState, bpm: number, sharedNowMs: number): MetronomeState {
  if (m.startMs === null) return { ...m, bpm };
  const n = Math.max(0, Math.ceil((sharedNowMs + CHANGE_LEAD_MS - m.startMs) / beatMs(m.bpm)));
  const at = m.startMs + n * beatMs(m.bpm);
  return { ...m, bpm, startMs: at - n * beatMs(bpm) };
}

export type Advance = { ms: number; why: 'together' | 'leader' | 'measuring' | 'leader-gone' };

/**
 * Our advance: 0 in together mode and for the leader; else the one-way delay the leader last
 * published from us (0 while the leader has not measured us yet, or has left: together then).
 */
export function advanceFor(m: MetronomeState | null, selfId: number, roster: ReadonlyMap<number, MemberState>): Advance {
  if (!m || m.mode !== 'leader' || m.leader === null) return { ms: 0, why: 'together' };
  if (m.leader === selfId) return { ms: 0, why: 'leader' };
  const leader = roster.get(m.leader);
  if (!leader) return { ms: 0, why: 'leader-gone' };
  const ms = leader.quality?.heard[String(selfId)]?.oneWayMs;
  return ms === undefined ? { ms: 0, why: 'measuring' } : { ms, why: 'leader' };
}
