/**
 * A small seeded PRNG (mulberry32) and a Fisher–Yates shuffle for the math loaders and the
 * arithmetic generator. Stand-in until the shared lib/data/rng.ts lands; switching means replacing
 * the import of `seededRandom` in math.ts and arithmetic.ts.
 */

/** Uniform draws from a seeded stream; the same seed gives the same sequence on every platform. */
export interface SeededRandom {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number;
}

/** mulberry32 over a 32-bit state: fast, deterministic, statistically fine for data shuffling. */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)) };
}

/** A shuffled copy (Fisher–Yates). */
export function shuffled<T>(items: readonly T[], random: SeededRandom): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
