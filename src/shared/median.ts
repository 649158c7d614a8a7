// The median of a list of figures: `median` for the page's measurements (signaling round trip,
// the one-way display), which copies and sorts; `medianInPlace` for the network worker, which
// sorts a scratch array it owns and allocates nothing.

/** Median of a non-empty list (mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError('median of an empty list');
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median of the first `n` (> 0) values of `scratch`, which it sorts in place. */
export function medianInPlace(scratch: Float64Array, n: number): number {
  const s = scratch.subarray(0, n).sort();
  const m = n >> 1;
  return n % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
