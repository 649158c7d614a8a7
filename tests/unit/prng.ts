// Seeded pseudo-random numbers for the unit tests (shared with the ring producer worker).
// Every randomised test prints its seed in its assertion messages; rerun one seed with
// TUTTI_SEED=<n> node --import tsx --test tests/unit/<file>.test.ts

/** mulberry32: tiny, fast, good enough for test schedules. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Integer in [lo, hi] (inclusive). */
export function randInt(rng: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

/**
 * The seeds a randomised test runs: TUTTI_SEED alone when set, otherwise the fixed regression
 * seeds plus one fresh seed per run (printed on failure, so a red run can be replayed).
 */
export function testSeeds(fixed: readonly number[]): number[] {
  const env = process.env['TUTTI_SEED'];
  if (env !== undefined && env !== '') return [Number(env) >>> 0];
  return [...fixed, (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) >>> 0];
}
