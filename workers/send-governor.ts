// How much one link can carry, in the network worker. SCTP's congestion control governs our
// unreliable channel too: on a lossy path with a long round trip it will not carry the full
// stream, and what it holds back queues at the sender (bufferedAmount) until it is useless. The
// governor steps that one peer's stream down a ladder while its link is congested, and back up,
// one step at a time, after a clean stretch that doubles each time a step up is followed by
// congestion (so a link at its limit is not probed every few seconds). A step down needs
// CONGESTED_SECONDS congested seconds in a row: a congested link keeps dropping, while a stall of
// the sender's own machine (a GC pause, a busy core) drops one burst and is over.
//
//   level 0: mono, no redundant copies     (a stereo sender mixes down for this peer only)
//   level 1: the sender's own channel count, no copies
//   level k: …with k − 1 copies            (up to 1 + the room's redundancy setting)
//
// Redundancy goes first because copies multiply the bytes; stereo goes last because it is what
// the player chose. Pure logic on a caller-supplied clock; unit-tested in Node.

import { MAX_REDUNDANCY } from '../src/shared/constants.ts';

/** Clean time before the first step back up. */
export const RAISE_AFTER_MS = 10_000;
/** Longest clean time a step up can be made to wait (after repeated failed ones). */
export const MAX_RAISE_AFTER_MS = 160_000;
/** Congestion this soon after a step up counts as caused by it: the next one waits twice as long. */
const RAISE_FAILED_WITHIN_MS = 5_000;
const TOP = 1 + MAX_REDUNDANCY;
/** Congested seconds in a row before the first step down (then one step per further congested second). */
export const CONGESTED_SECONDS = 2;

export class SendGovernor {
  /** Highest level this link may use (see the ladder above); a never-congested link stays at the top. */
  level = TOP;
  private cleanSinceMs: number;
  private raiseAfterMs = RAISE_AFTER_MS;
  private lastRaiseMs = -Infinity;
  /** Congested seconds in a row so far. */
  private congestedRun = 0;

  constructor(nowMs: number) {
    this.cleanSinceMs = nowMs;
  }

  /** Redundant copies to send, given the room's setting. */
  copies(roomSetting: number): number {
    return Math.max(0, Math.min(this.level, 1 + roomSetting) - 1);
  }

  /** Whether this link gets a mono mixdown. */
  get mono(): boolean {
    return this.level === 0;
  }

  /**
   * Once a second. `congested`: frames to this peer were dropped at the sender in the last second
   * (its channel's queue was over the limit). `roomSetting`: the redundancy the room asks for.
   */
  tick(nowMs: number, congested: boolean, roomSetting: number): void {
    const ceiling = 1 + roomSetting;
    if (congested) {
      // Any congested second restarts the clean stretch, a lone one included.
      this.cleanSinceMs = nowMs;
      if (++this.congestedRun < CONGESTED_SECONDS) return;
      if (nowMs - this.lastRaiseMs <= RAISE_FAILED_WITHIN_MS) this.raiseAfterMs = Math.min(MAX_RAISE_AFTER_MS, this.raiseAfterMs * 2);
      // One step down from what is actually sent (the room may ask for less than the level allows).
      this.level = Math.max(0, Math.min(this.level, ceiling) - 1);
      return;
    }
    this.congestedRun = 0;
    if (this.level < ceiling && nowMs - this.cleanSinceMs >= this.raiseAfterMs) {
      this.level++;
      this.lastRaiseMs = nowMs;
      this.cleanSinceMs = nowMs;
    }
  }
}
