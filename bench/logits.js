// Deterministic logits and targets for the log-prob benches (bench/logprob.bench.js, bench/linear-logprob.bench.js).

/** n floats in [-4, 4) from a linear congruential generator seeded by `seed`. */
export function randomLogits(n, seed) {
  let state = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = (state / 4294967296 - 0.5) * 8;
  }
  return out;
}

/** One target per row, spread over the vocabulary. */
export function targetsFor(rows, vocab) {
  return Int32Array.from({ length: rows }, (_, t) => (t * 7919) % vocab);
}
