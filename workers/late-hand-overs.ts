// The depth controller's memory of late hand-overs (workers/depth-controller.ts, "Late
// hand-overs"): dips of the buffer's low point that refill at once. A capture buffer the sender's
// device (or its browser's capture path) hands over late, with the next one on time, leaves the
// receiver's level one window lower by as long as it was late, and the next back where it was; the recurring
// step (a buffer late for good, the arrivals' lag a period higher after it) leaves the level low
// until the rate refills it or the relief lets it stay. So the dip measured here is how far one
// window's low point sits below both its neighbourhoods (the higher of the two windows before it,
// and of the two after it), read two windows late. Per second, as RecurringDips keeps them.
// Preallocated; the network worker feeds it per fill window through the controller.

import { RecurringDips } from './recurring-dips.ts';

/** Windows each side of the one measured. */
const SIDE = 2;
const SPAN = 2 * SIDE + 1;

export class LateHandOvers {
  /** The last SPAN low points (ring), quanta. */
  private readonly lows = new Float32Array(SPAN);
  private at = 0;
  private filled = 0;
  private readonly seconds = new RecurringDips();

  /** One fill window's low point, quanta. */
  onWindow(low: number): void {
    this.lows[this.at] = low;
    this.at = (this.at + 1) % SPAN;
    if (this.filled < SPAN) this.filled++;
    if (this.filled < SPAN) {
      this.seconds.onWindow(0);
      return;
    }
    const before = Math.max(this.ago(0), this.ago(1));
    const after = Math.max(this.ago(SIDE + 1), this.ago(SIDE + 2));
    this.seconds.onWindow(Math.max(0, Math.min(before, after) - this.ago(SIDE)));
  }

  /** The k-th of the last SPAN low points, oldest first (this.at points at the oldest). */
  private ago(k: number): number {
    return this.lows[(this.at + k) % SPAN]!;
  }

  /**
   * The largest late hand-over of the last ~90 s (quanta; 0 while none). From the first one seen:
   * the capture path that hands one buffer over late hands over more within the minute (the rig's
   * traces: none in some joins, several a minute in others, often in runs), and the next one may
   * come right after the recurring step. Waiting for a second sighting, as RecurringDips.value()
   * does, left 6 glitches in 6 simulated minutes at 2 a minute (bench/device-rhythm.ts,
   * "Late hand-overs"); from the first, none, for ~3 ms more delay while they come, nothing when
   * none does.
   */
  value(): number {
    return this.seconds.largest();
  }

  /** Forget everything (a resync). */
  clear(): void {
    this.at = 0;
    this.filled = 0;
    this.seconds.clear();
  }
}
