// The median of a list of figures, for the page's measurements (signaling round trip, the one-way
// display). Not for the audio path: it copies and sorts.

/** Median of a non-empty list (mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError('median of an empty list');
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
