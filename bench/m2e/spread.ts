// Summary of a set of measurements (Node, pure): median and spread, for the m2e tables.

/** Median, min, max and p10/p90 (nearest rank) of the non-null values; null when there are none. */
export interface Spread {
  n: number;
  median: number;
  min: number;
  max: number;
  p10: number;
  p90: number;
}
export function spread(values: readonly (number | null)[]): Spread | null {
  const xs = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  if (!xs.length) return null;
  const rank = (p: number) => xs[Math.min(xs.length - 1, Math.max(0, Math.ceil(p * xs.length) - 1))]!;
  const mid = xs.length >> 1;
  const median = xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
  return { n: xs.length, median, min: xs[0]!, max: xs[xs.length - 1]!, p10: rank(0.1), p90: rank(0.9) };
}
