// Rolling window of added-latency samples (ms) for one peer, summarised at each stats tick.
// Runs in the network worker; fixed storage, no per-packet allocation.

const CAPACITY = 1024;

export class LatencyWindow {
  private readonly values = new Float64Array(CAPACITY);
  private count = 0;
  add(ms: number): void {
    this.values[this.count % CAPACITY] = ms;
    this.count++;
  }
  reset(): void {
    this.count = 0;
  }
  /** p50/p99 of the samples since the last reset, or null when there were none. */
  summary(): { p50: number; p99: number } | null {
    const n = Math.min(this.count, CAPACITY);
    if (n === 0) return null;
    const sorted = this.values.slice(0, n).sort();
    const at = (q: number) => Math.round(sorted[Math.min(n - 1, Math.floor(q * n))]! * 100) / 100;
    return { p50: at(0.5), p99: at(0.99) };
  }
}
