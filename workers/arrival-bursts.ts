// The depth controller's view of how audio is handed over (workers/depth-controller.ts,
// "Start-up"): the size of the bursts packets arrive in. A sender whose capture device hands its
// audio over in periods sends each period's quanta at once (on the bench rig 1024-frame buffers:
// 8 packets within ~0.6 ms, every 21.3 ms, in 5547 of 5697 bursts of one traced join), and a
// device that hands one period over late (the rig's does every ~22 s) takes a whole burst out of
// the receiver's buffer at once. Preallocated; the network worker feeds it per packet.

import { MAX_DEPTH, QUANTUM_MS } from '../src/shared/constants.ts';

/** Arrivals closer than this to the one before belong to the same burst (half a quantum: a paced sender's are a whole quantum apart). */
const BURST_GAP_MS = QUANTUM_MS / 2;
/** Closed bursts kept; the size is their median, so a hold-up that delivers many at once does not count. */
const KEPT = 31;

export class ArrivalBursts {
  private readonly sizes = new Float32Array(KEPT);
  private readonly scratch = new Float32Array(KEPT);
  private filled = 0;
  private next = 0;
  private lastMs = NaN;
  private current = 0;

  /** One packet arrived at `atMs` (any clock in ms, increasing). */
  add(atMs: number): void {
    if (this.current > 0 && atMs - this.lastMs >= BURST_GAP_MS) {
      this.sizes[this.next] = Math.min(this.current, MAX_DEPTH);
      this.next = (this.next + 1) % KEPT;
      if (this.filled < KEPT) this.filled++;
      this.current = 0;
    }
    this.current++;
    this.lastMs = atMs;
  }

  /** The median burst, packets (quanta); 0 until KEPT bursts have closed. */
  size(): number {
    if (this.filled < KEPT) return 0;
    this.scratch.set(this.sizes);
    this.scratch.sort();
    return this.scratch[KEPT >> 1]!;
  }

  /** Forget everything (a resync). */
  clear(): void {
    this.filled = 0;
    this.next = 0;
    this.lastMs = NaN;
    this.current = 0;
  }
}
