// The depth controller's memory of how late audio arrives against its capture stamps
// (workers/depth-controller.ts, "Slow lateness"): the mean lag (arrival time − capture stamp,
// quanta) of each half second over the last ~90 s. A stream whose arrivals drift slowly later and
// earlier (a sound server's period rhythm) shows here as a slow wave; fast network jitter averages
// out within a half second. Preallocated; the network worker feeds it per packet and per update.

/** Half-second slots, ~90 s (the recurring-dip memory's span). */
const SLOT_MS = 500;
const SLOTS = 180;

export class ArrivalLag {
  private readonly means = new Float64Array(SLOTS);
  private filled = 0;
  private next = 0;
  private sum = 0;
  private count = 0;
  private slotStart = NaN;

  /** One packet's lag: its arrival time minus its capture stamp, quanta (any constant offset between the two clocks cancels below). */
  add(quanta: number): void {
    this.sum += quanta;
    this.count++;
  }

  /** At each controller update: closes a slot every SLOT_MS (a slot with no packet is left out). */
  tick(nowMs: number): void {
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

  /** How much later arrivals come now (the last half second) than at their earliest in the memory, quanta; 0 until 2 slots. */
  excess(): number {
    if (this.filled < 2) return 0;
    let min = Infinity;
    for (let i = 0; i < this.filled; i++) if (this.means[i]! < min) min = this.means[i]!;
    return this.means[(this.next - 1 + SLOTS) % SLOTS]! - min;
  }

  /** Forget everything (a resync: a new timeline, maybe a new sender clock). */
  clear(): void {
    this.filled = 0;
    this.next = 0;
    this.sum = 0;
    this.count = 0;
    this.slotStart = NaN;
  }
}
