// Wrap-safe arithmetic on 32-bit packet sequence numbers (RFC 1982 serial numbers).
// Pure functions; used by the network worker, the playback worklet and the tests.

/** Normalise any integer to an unsigned 32-bit sequence number. */
export function seq32(n: number): number {
  return n >>> 0;
}

/** Signed distance a - b in [-2^31, 2^31): positive when a is after b, across the 2^32 wrap. */
export function seqDiff(a: number, b: number): number {
  return (a - b) | 0;
}

/** a + n as a sequence number. */
export function seqAdd(a: number, n: number): number {
  return (a + n) >>> 0;
}
