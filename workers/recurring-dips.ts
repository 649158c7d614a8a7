// The depth controller's memory of dips that come back (workers/depth-controller.ts, "Recurring
// steps"): the largest dip of each of the last ~90 s, and the second-largest of those, leaving out
// the seconds beside the largest (one dip can straddle two seconds). A dip seen in two separate
// seconds is the devices' rhythm; one seen once is an outage, which the glitch growth handles
// and the usual shrinking forgets. Preallocated; the network worker feeds it per fill window.

import { MAX_DEPTH } from '../src/shared/constants.ts';

/** Fill windows per second (43 ms each), and seconds kept. */
const SECOND_WINDOWS = 23;
const SECONDS_KEPT = 90;
/** Ordinary seconds (below the recurring step) before ordinary() says anything. */
const FEWEST_SECONDS = 3;
/** Ordinary seconds before ordinary() leaves out a dip seen only once (before, it keeps their largest). */
const ORDINARY_SECONDS = 10;

export class RecurringDips {
  /** The largest dip of each of the last SECONDS_KEPT seconds (ring). */
  private readonly secondMax = new Float32Array(SECONDS_KEPT);
  private filled = 0;
  private next = 0;
  /** The second in progress: windows so far and its largest dip. */
  private windows = 0;
  private current = 0;

  /** A dip (quanta) seen in the second in progress, besides its windows' own (a glitch's). */
  note(dip: number): void {
    if (dip > this.current) this.current = Math.min(dip, MAX_DEPTH);
  }

  /** One fill window's dip (quanta); every SECOND_WINDOWS windows a second closes. */
  onWindow(dip: number): void {
    this.note(dip);
    if (++this.windows < SECOND_WINDOWS) return;
    this.secondMax[this.next] = this.current;
    this.next = (this.next + 1) % SECONDS_KEPT;
    if (this.filled < SECONDS_KEPT) this.filled++;
    this.windows = 0;
    this.current = 0;
  }

  /** The dip that recurs (quanta), 0 until three seconds are in. */
  value(): number {
    if (this.filled < 3) return 0;
    return this.seenTwice(Infinity, this.largestAt(Infinity));
  }

  /**
   * The dip of an ordinary second (quanta): of the per-second largest dips below `below` (the
   * recurring step's seconds left out) over the seconds kept, the largest that two separate
   * seconds have seen (as value(): one outage, a stall of this machine, does not hold the relief
   * down for 90 s), once 10 are in; before that the largest of them; Infinity while fewer than 3
   * are in (nothing known: no relief).
   * Not a quantile: on the rig the dips that matter are a render's worth (our output's 4 quanta,
   * the phase of the sender's bursts against our renders going back: depth-controller.ts,
   * "Bursts against renders"), and some of them come in fewer than one second in ten. At the 90th
   * percentile four traced 150 s joins had 3 seconds whose lowest point came within 1.5 quanta of
   * empty (lowest 0.81); with the largest, none (lowest 2.32), for 0.23 quanta more level on
   * average (docs/BENCHMARKS.md).
   */
  ordinary(below: number): number {
    let m = 0;
    for (let i = 0; i < this.filled; i++) if (this.secondMax[i]! < below) m++;
    if (m < FEWEST_SECONDS) return Infinity;
    const at = this.largestAt(below);
    // A few seconds say little about their tail (the start-up's relief comes that early): all of it.
    return m < ORDINARY_SECONDS ? this.secondMax[at]! : this.seenTwice(below, at);
  }

  /** The largest per-second dip of the seconds kept (quanta; 0 while none is in). */
  largest(): number {
    const at = this.largestAt(Infinity);
    return at < 0 ? 0 : this.secondMax[at]!;
  }

  /** Where the largest per-second dip below `below` is in the ring (the first if several; −1: none). */
  private largestAt(below: number): number {
    let at = -1;
    for (let i = 0; i < this.filled; i++) {
      const d = this.secondMax[i]!;
      if (d < below && (at < 0 || d > this.secondMax[at]!)) at = i;
    }
    return at;
  }

  /** The largest per-second dip below `below` more than a second apart from the one at `at` (one dip can straddle two seconds). */
  private seenTwice(below: number, at: number): number {
    let second = 0;
    for (let i = 0; i < this.filled; i++) {
      const d = this.secondMax[i]!;
      const apart = Math.min((i - at + SECONDS_KEPT) % SECONDS_KEPT, (at - i + SECONDS_KEPT) % SECONDS_KEPT);
      if (d < below && apart > 1 && d > second) second = d;
    }
    return second;
  }

  /** Forget everything (a resync: what led to it was an outage, not the devices' rhythm). */
  clear(): void {
    this.filled = 0;
    this.next = 0;
    this.windows = 0;
    this.current = 0;
  }
}
