// The depth controller's memory of how late audio arrives against its capture stamps
// (workers/depth-controller.ts, "Slow lateness"): the mean lag (arrival time − capture stamp,
// quanta) of each half second over the last ~90 s, and of the last ~200 ms. A stream whose
// arrivals drift slowly later and earlier (a sound server's period rhythm) shows here as a slow
// wave; fast network jitter averages out within a half second. The recent mean is short so that
// a step is seen as fast as the buffer's low point shows it (the rate's median of ~0.5 s): seen
// half a second late, the rate refilled each step and drained it again (on the rig ±1500 ppm
// after every step). Preallocated; the network worker feeds it per packet and per update.

/** Half-second slots, ~90 s (the recurring-dip memory's span). */
const SLOT_MS = 500;
const SLOTS = 180;
/** A half second's mean lag may sit this much (quanta) above the highest of the 1-3 s before it and still be on a falling ramp (network jitter, the stamps' ±2 ms). */
const RAMP_TOLERANCE = 0.25;
/**
 * How far back (half seconds) a half second's lag is held against (fallFromStart): the highest of
 * the 1-3 s before it. On the rig one traced join in eight fell in a staircase: ~1.5 quanta down
 * every ~3 s, rising up to 0.85 quanta in the seconds between, below the highs before each drop
 * (bench/m2e/segments/playout-trace.ts, 2026-11-29 evening). Held against the second before, it
 * read as no ramp and its first ~15 s held the whole target (+4-5 quanta, the m2e run's slowest
 * C default round). A lag that climbs above its recent highs still ends the ramp within a second.
 */
const ENVELOPE_SLOTS = 6;
/**
 * Half seconds at a stream's start within which a passing bump of lag ends (fallFromStart): on the
 * rig 5 of 24 traced joins rose 2-10 quanta above their first second for 3-6 s, then fell back onto
 * the ramp the others showed (bench/m2e/segments/playout-trace.ts, 2026-11-29). A late buffer
 * there (a step onto a new ramp) stays above the first second for most of the ramp's ~21 s.
 */
const BUMP_SLOTS = 16;

export class ArrivalLag {
  private readonly means = new Float64Array(SLOTS);
  private filled = 0;
  private next = 0;
  private sum = 0;
  private count = 0;
  private slotStart = NaN;
  /** The update interval in progress and the one before it (the recent mean). */
  private tickSum = 0;
  private tickCount = 0;
  private prevSum = 0;
  private prevCount = 0;
  private recent = NaN;

  /** One packet's lag: its arrival time minus its capture stamp, quanta (any constant offset between the two clocks cancels below). */
  add(quanta: number): void {
    this.sum += quanta;
    this.count++;
    this.tickSum += quanta;
    this.tickCount++;
  }

  /** At each controller update (~100 ms): the recent mean, and a slot closed every SLOT_MS (a slot with no packet is left out). */
  tick(nowMs: number): void {
    const n = this.tickCount + this.prevCount;
    if (n > 0) this.recent = (this.tickSum + this.prevSum) / n;
    this.prevSum = this.tickSum;
    this.prevCount = this.tickCount;
    this.tickSum = 0;
    this.tickCount = 0;
    if (Number.isNaN(this.slotStart)) this.slotStart = nowMs;
    if (nowMs - this.slotStart < SLOT_MS) return;
    this.slotStart = nowMs;
    if (this.count === 0) return;
    this.means[this.next] = this.sum / this.count;
    this.next = (this.next + 1) % SLOTS;
    if (this.filled < SLOTS) this.filled++;
    this.sum = 0;
    this.count = 0;
  }

  /** How much later arrivals come now (the last ~200 ms) than at their earliest half second in the memory, quanta; 0 until 2 slots. */
  excess(): number {
    if (this.filled < 2 || Number.isNaN(this.recent)) return 0;
    let min = Infinity;
    for (let i = 0; i < this.filled; i++) if (this.means[i]! < min) min = this.means[i]!;
    return Math.max(0, this.recent - min);
  }

  /** How far apart the latest and the earliest half second in the memory came, quanta; 0 until 2 slots. */
  range(): number {
    if (this.filled < 2) return 0;
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < this.filled; i++) {
      const m = this.means[i]!;
      if (m < min) min = m;
      if (m > max) max = m;
    }
    return max - min;
  }

  /**
   * How far the arrivals' lag has fallen (quanta) while it has done nothing but fall since the
   * stream's first second: each half second's mean at most RAMP_TOLERANCE above the highest of the
   * 1-3 s before it (ENVELOPE_SLOTS; a bump's half seconds count as the first second's highest),
   * and none after the first second above the first second's highest. Else 0. A stream
   * that begins at the top of a delivery ramp shows this (depth-controller.ts, "Start-up"). One
   * passing bump in the first BUMP_SLOTS is let by: half seconds above the first second's highest
   * that end within it, after which the lag has only fallen again, and the fall is still counted
   * from the first second's highest. Only while the memory still holds the stream's start (its
   * first ~90 s).
   */
  fallFromStart(): number {
    const n = this.filled;
    if (n < 3 || n >= SLOTS || Number.isNaN(this.recent)) return 0;
    // The first second's highest; but a second half second higher than the tolerance is a bump's
    // onset (a ramp's top does not rise), and the first alone is the top (on the rig: 34.3 ms, then
    // 38.7 on the way to 52.8, where the joins without a bump began at 33.8-34.4).
    const top = this.means[1]! > this.means[0]! + RAMP_TOLERANCE ? this.means[0]! : Math.max(this.means[0]!, this.means[1]!);
    // The ramp is read from the first half second after the last one above the top.
    let from = 0;
    for (let i = 2; i < n; i++) if (this.means[i]! > top) from = i + 1;
    if (from > BUMP_SLOTS) return 0;
    for (let i = Math.max(2, from); i < n; i++) {
      let envelope = -Infinity;
      for (let k = Math.max(0, i - ENVELOPE_SLOTS); k <= i - 2; k++) envelope = Math.max(envelope, Math.min(top, this.means[k]!));
      if (this.means[i]! > envelope + RAMP_TOLERANCE) return 0;
    }
    return from < n ? Math.max(0, top - this.recent) : 0;
  }

  /** Forget everything (a resync: a new timeline, maybe a new sender clock). */
  clear(): void {
    this.filled = 0;
    this.next = 0;
    this.sum = 0;
    this.count = 0;
    this.slotStart = NaN;
    this.tickSum = this.tickCount = this.prevSum = this.prevCount = 0;
    this.recent = NaN;
  }
}
