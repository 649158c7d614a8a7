// Network worker: the one-way reports exchanged with one peer on the audio channel (PROTOCOL.md
// §1.8b, ControlKind.ONE_WAY). Our side: the one-way delay of each of the peer's packets (capture
// stamp → our speaker, as the receiver measures it for PeerStats.oneWayMs), and at each report the
// median of those of the last 0.4 s. Their side: the latest report the peer sent of ours, and
// when it came. Leader mode advances a member's clicks by the leader's report (§12c): through the
// room's awareness that figure is a second's median and comes a second or more after a change of
// the leader's playout (a stall, a depth change); on the audio channel, within about 0.1 s.
// Fixed storage; no allocation per packet.

import { QUANTUM_MS } from '../src/shared/constants.ts';

/** Samples kept: 0.4 s holds ~150 packets; a stalled worker's burst can bring more (the newest are kept). */
const CAPACITY = 512;
/**
 * Each report is the median of the packets of the last this many ms. Not just those since the last
 * report (0.1 s): after a stall of this machine the figure jumps for up to ~0.2 s (a burst of
 * packets that waited, dated before the output's step is followed; then the playout trims the
 * backlog), and a member that advanced by that jump struck up to 35 ms early (seen in the leader
 * test). Over 0.4 s such a jump stays under half the packets; the drain after it (at most 0.5 %
 * of playout rate, 5 ms a second) is followed about 0.2 s late: 1 ms.
 */
export const REPORT_WINDOW_MS = 400;
/**
 * When this machine stalled (workers/net.worker.ts sees our output step later): the packets of the
 * last this many ms are dropped from the window, and those of the next HOLD_AHEAD_MS are not taken.
 * They are the burst that waited through the stall, dated by the output's old timing (its step is
 * followed only after three readings, ~0.15 s) and played from a backlog that the playout trims at
 * once (PEER_I32.TRIM_NOW) within a fill window or two, and what of it arrives later within ~0.26 s
 * (TRIM_NOW_WINDOWS). None of that is the delay a member's next audio will meet; the packets from
 * before the stall and after the trim are. Meanwhile the member keeps our last report (fresh for
 * ONE_WAY_FRESH_MS), which is that delay again once the trim is whole.
 */
export const HOLD_BACK_MS = 250;
export const HOLD_AHEAD_MS = 300;
/** Fewer packets than this in the window: too few for a median; no report. */
const MIN_SAMPLES = 8;
/** A report older than this is not used (the peer stopped sending them, or its channel stalls). */
export const ONE_WAY_FRESH_MS = 1_000;
/**
 * The member's side (theirs()): a rise in the leader's reports of more than RISE_JUMP_MS is taken
 * once it has held this long; a smaller one, and a fall, at once. The leader sees its own stall only when its page follows the output's step
 * (~0.15 s, three readings), and its reports of that time carry the burst the stall left, which
 * the playout then trims (HOLD_BACK_MS above drops it from later reports, not from those already
 * sent). A member that advanced by such a report struck early by the jump: a quiet-machine run of
 * the leader test (2026-12-02), the leader's reports at 90.6 ms for 0.2 s between 71 and 74,
 * beat 72 struck 16.0 ms early. A jump that lasts is followed this much later: at 100 bpm one
 * strike late by the jump at most.
 */
export const RISE_CONFIRM_MS = 300;
/**
 * A rise up to this is taken at once: two quanta. A stall's jump is the stall (20-50 ms seen); a
 * rise of a quantum or two is the leader's depth growing or its output stepping, and lasts. Held
 * back 0.3 s too, such a rise spoiled a strike (a loaded run, 2026-12-02: the one-way settled 3.3
 * ms higher after a stall, and beat 138 came 3.5 ms late).
 */
export const RISE_JUMP_MS = 2 * QUANTUM_MS;
/** Reports remembered for RISE_CONFIRM_MS (they come every ~0.1 s; a burst after our own stall may bring several at once). */
const REPORTS_KEPT = 16;

export class OneWayReports {
  private readonly samples = new Float64Array(CAPACITY);
  private readonly at = new Float64Array(CAPACITY);
  private readonly scratch = new Float64Array(CAPACITY);
  private count = 0;
  /** Entries that hold a packet still (≤ CAPACITY; hold() drops the newest). */
  private size = 0;
  /** Packets before this time (performance.now ms) are not taken (see hold). */
  private heldUntil = -Infinity;
  /** The newest packet came with a backlog about to be trimmed (see add). */
  private trimming = false;
  /** Id of our last report to the peer. */
  sentId = 0;
  /** The peer's latest report of our audio (ms), its id, and when it came (performance.now ms); null before one. */
  private theirsMs: number | null = null;
  private theirsId = 0;
  private theirsAt = -Infinity;
  /** The peer's last REPORTS_KEPT reports (ms) and when each came, a ring by theirsCount (see theirs). */
  private readonly theirsRing = new Float64Array(REPORTS_KEPT);
  private readonly theirsRingAt = new Float64Array(REPORTS_KEPT);
  private theirsCount = 0;

  /**
   * One of the peer's packets at `nowMs` (performance.now): its one-way delay, ms, less the backlog
   * our playout is about to trim (`trimming`: there is one, DepthController.pendingTrim). When a
   * backlog is first seen, the packets of the last HOLD_BACK_MS are dropped: they brought it (a
   * burst after a hold-up upstream) before the playout's fill windows showed it, so nothing was
   * taken off them, and they outnumbered the rest of the window (seen: a report 26 ms too high).
   */
  add(ms: number, nowMs: number, trimming = false): void {
    if (trimming && !this.trimming) this.dropSince(nowMs - HOLD_BACK_MS);
    this.trimming = trimming;
    if (nowMs < this.heldUntil) return;
    const i = this.count % CAPACITY;
    this.samples[i] = ms;
    this.at[i] = nowMs;
    this.count++;
    if (this.size < CAPACITY) this.size++;
  }

  /** This machine stalled, as seen at `nowMs` (performance.now): leave out its burst and backlog (HOLD_BACK_MS, HOLD_AHEAD_MS). */
  hold(nowMs: number): void {
    this.dropSince(nowMs - HOLD_BACK_MS);
    this.heldUntil = nowMs + HOLD_AHEAD_MS;
  }

  /** Forget the packets that came after `fromMs`. */
  private dropSince(fromMs: number): void {
    while (this.size > 0 && this.at[(this.count - 1) % CAPACITY]! > fromMs) {
      this.count--;
      this.size--;
    }
  }

  /** The median one-way delay of the packets of the last REPORT_WINDOW_MS before `nowMs` (ms), or null when too few came. */
  report(nowMs: number): number | null {
    const kept = this.size;
    let n = 0;
    for (let k = 0; k < kept; k++) {
      const i = (this.count - 1 - k) % CAPACITY;
      if (nowMs - this.at[i]! > REPORT_WINDOW_MS) break; // older from here on
      this.scratch[n++] = this.samples[i]!;
    }
    if (n < MIN_SAMPLES) return null;
    const s = this.scratch.subarray(0, n).sort();
    return n % 2 === 1 ? s[n >> 1]! : (s[(n >> 1) - 1]! + s[n >> 1]!) / 2;
  }

  /** A report from the peer (its id and figure, ms) came at `nowMs`: kept unless a newer one already came (the channel is unordered). */
  received(id: number, ms: number, nowMs: number): void {
    if (this.theirsMs !== null && ((id - this.theirsId) | 0) <= 0) return;
    if (!(ms >= 0 && ms <= 10_000)) return; // not a delay any link of ours has: ignore it
    this.theirsMs = ms;
    this.theirsId = id;
    this.theirsAt = nowMs;
    const i = this.theirsCount % REPORTS_KEPT;
    this.theirsRing[i] = ms;
    this.theirsRingAt[i] = nowMs;
    this.theirsCount++;
  }

  /**
   * The peer's report of our one-way delay to its speaker (ms), if its latest came within
   * ONE_WAY_FRESH_MS of `nowMs`, else null: the latest, unless it is more than RISE_JUMP_MS over
   * the lowest of the reports that came within RISE_CONFIRM_MS before it; then that lowest, so a
   * jump counts once it has lasted that long.
   */
  theirs(nowMs: number): number | null {
    if (this.theirsMs === null || nowMs - this.theirsAt > ONE_WAY_FRESH_MS) return null;
    let low = this.theirsMs;
    const kept = Math.min(this.theirsCount, REPORTS_KEPT);
    for (let k = 1; k < kept; k++) {
      const i = (this.theirsCount - 1 - k) % REPORTS_KEPT;
      if (this.theirsAt - this.theirsRingAt[i]! > RISE_CONFIRM_MS) break; // older from here on
      if (this.theirsRing[i]! < low) low = this.theirsRing[i]!;
    }
    return this.theirsMs - low > RISE_JUMP_MS ? low : this.theirsMs;
  }
}
