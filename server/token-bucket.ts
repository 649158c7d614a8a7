// A token bucket for the signaling hub's per-socket rate limits (Node). Time is passed in, so the
// caller reads the clock once per frame and tests need no fake timers.

export class TokenBucket {
  private tokens: number;
  private last: number;

  /** Starts full: `burst` tokens, refilled at `ratePerSecond`, never above `burst`. */
  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.last = nowMs;
  }

  /** Take `n` tokens if there are that many; false (and nothing taken) otherwise. */
  take(n: number, nowMs: number): boolean {
    this.refill(nowMs);
    if (this.tokens < n) return false;
    this.tokens -= n;
    return true;
  }

  /** Back at `burst`: as if never used. */
  full(nowMs: number): boolean {
    this.refill(nowMs);
    return this.tokens >= this.burst;
  }

  private refill(nowMs: number): void {
    if (nowMs > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.last) / 1000) * this.ratePerSecond);
      this.last = nowMs;
    }
  }
}
