// Chi-square goodness of fit of 10^5 draws against the reference distribution, for several settings.
// Each setting uses a fixed seed, so the test is deterministic; with a correct sampler a fresh seed
// would fail with probability 1e-6 (critical value at α = 1e-6, Wilson–Hilferty approximation).
import { describe, expect, it } from 'vitest';
import { sampleSync, type SamplingOptions } from '../lib/index.js';
import { samplingReference } from '../lib/reference/sampling.js';
import { randomNormal } from './helpers/random.js';

const DRAWS = 100_000;
const Z_UPPER_1E6 = 4.753424; // standard normal quantile at 1 − 1e-6

/** χ² critical value for `df` degrees of freedom at α = 1e-6 (Wilson–Hilferty). */
function chiSquareCritical(df: number): number {
  const a = 2 / (9 * df);
  return df * (1 - a + Z_UPPER_1E6 * Math.sqrt(a)) ** 3;
}

/** χ² statistic and degrees of freedom; bins with expected count < 5 are pooled into one. */
function chiSquare(counts: number[], probs: ArrayLike<number>): { stat: number; df: number } {
  let stat = 0;
  let bins = 0;
  let pooledObserved = 0;
  let pooledExpected = 0;
  for (let t = 0; t < counts.length; t++) {
    const expected = probs[t] * DRAWS;
    if (expected === 0) continue;
    if (expected < 5) {
      pooledObserved += counts[t];
      pooledExpected += expected;
      continue;
    }
    stat += (counts[t] - expected) ** 2 / expected;
    bins++;
  }
  if (pooledExpected >= 5) (stat += (pooledObserved - pooledExpected) ** 2 / pooledExpected), bins++;
  return { stat, df: bins - 1 };
}

const vocab = 60;
const row = randomNormal(vocab, 1.5, 77);
row[3] = row[4] = row[5]; // a tie group
const settings: Array<[string, SamplingOptions]> = [
  ['plain softmax', { seed: 1 }],
  ['temperature 0.6 + topK 12', { seed: 2, temperature: 0.6, topK: 12 }],
  ['topP 0.8', { seed: 3, topP: 0.8 }],
  ['topK 20 + topP 0.9 + minP 0.05', { seed: 4, topK: 20, topP: 0.9, minP: 0.05 }],
  ['penalties + deny', { seed: 5, repetitionPenalty: 1.5, presencePenalty: 0.5, frequencyPenalty: 0.2 }],
];

describe('sample: chi-square goodness of fit, 10^5 draws', () => {
  it.each(settings)('%s', (_name, base) => {
    const logits = new Float32Array(DRAWS * vocab); // [DRAWS, V]: one row repeated, one Philox stream per row
    for (let r = 0; r < DRAWS; r++) logits.set(row, r * vocab);
    let options = base;
    if (base.repetitionPenalty) {
      const offsets = Int32Array.from({ length: DRAWS + 1 }, (_, r) => r * 4);
      const ids = Int32Array.from({ length: DRAWS * 4 }, (_, i) => [0, 7, 7, 11][i % 4]);
      const deny = { ids: new Int32Array(DRAWS).fill(9), offsets: Int32Array.from({ length: DRAWS + 1 }, (_, r) => r) };
      options = { ...base, history: { ids, offsets }, deny };
    }
    const { tokens } = sampleSync(logits, vocab, options);
    const probs = samplingReference(logits.subarray(0, vocab), vocab, {
      ...options, history: options.history && { ids: options.history.ids.subarray(0, 4), offsets: Int32Array.of(0, 4) },
      deny: options.deny && { ids: Int32Array.of(9), offsets: Int32Array.of(0, 1) },
    }).probs;
    const counts = new Array<number>(vocab).fill(0);
    for (const t of tokens) counts[t]++;
    expect(counts.filter((c, t) => c > 0 && probs[t] === 0)).toEqual([]); // never outside the support
    const { stat, df } = chiSquare(counts, probs);
    expect(df).toBeGreaterThan(0);
    expect(stat).toBeLessThan(chiSquareCritical(df));
  });
});
