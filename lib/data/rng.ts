/**
 * Small seeded PRNG for samplers and generators.
 *
 * `mulberry32` (Tommy Ettinger, public domain): 32-bit state, period 2^32, passes gjrand/PractRand to
 * a few GB; fast and plenty for shuffles and simulations, not for cryptography. Streams are keyed with
 * {@link mixSeed} (MurmurHash3's fmix32 finaliser over the parts), so stream (seed, epoch) never
 * depends on how many numbers another stream consumed: epoch e of a sampler is the same permutation
 * whether or not epochs 0..e−1 were drawn first.
 */
export type Random = () => number;

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** One 32-bit seed from several integers (order matters). */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) h = fmix32(h ^ fmix32(part >>> 0) ^ fmix32(Math.floor(part / 2 ** 32) >>> 0));
  return h;
}

/** A mulberry32 generator: uniform floats in [0, 1) with 32 bits of randomness each. */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Uniform integer in [0, n). */
export function randomInt(random: Random, n: number): number {
  return Math.floor(random() * n);
}

/** A uniformly chosen element of a non-empty list. */
export function pickOne<T>(random: Random, options: readonly T[]): T {
  return options[randomInt(random, options.length)];
}

/** Fisher–Yates shuffle in place; returns `array`. */
export function shuffleInPlace<T extends { length: number; [i: number]: unknown }>(array: T, random: Random): T {
  for (let i = array.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    const swap = array[i];
    array[i] = array[j];
    array[j] = swap;
  }
  return array;
}

/** Index drawn with probability proportional to `weights[i]` (weights ≥ 0, not all 0). */
export function weightedIndex(random: Random, weights: ArrayLike<number>, total: number): number {
  let r = random() * total;
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i];
    if (r < 0) return i;
  }
  return weights.length - 1;
}
