// The sampler against the sort-based float64 reference: exact support and probabilities on random
// logits and parameters (fast-check, fixed seed), logp / logpRaw, greedy, determinism, edge cases, errors.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { GrpoError, getThreads, sample, sampleSync, samplingProbsSync, setThreads, type SamplingOptions } from '../lib/index.js';
import { samplingReference } from '../lib/reference/sampling.js';
import { codeOf } from './helpers/errors.js';
import { randomInts, randomNormal, seededRandom } from './helpers/random.js';

const defaultThreads = getThreads();
afterEach(() => setThreads(defaultThreads));

function expectSameDistribution(logits: Float32Array, vocab: number, options: SamplingOptions): void {
  const probs = samplingProbsSync(logits, vocab, options);
  const ref = samplingReference(logits, vocab, options);
  const wrongSupport = [...probs.keys()].filter((i) => probs[i] > 0 !== ref.probs[i] > 0);
  expect(wrongSupport.slice(0, 5)).toEqual([]);
  const worst = probs.reduce((m, p, i) => Math.max(m, Math.abs(p - ref.probs[i])), 0);
  expect(worst).toBeLessThanOrEqual(1e-6);
  const { tokens, logp, logpRaw } = sampleSync(logits, vocab, options);
  tokens.forEach((token, r) => {
    const at = r * vocab + token;
    expect(ref.probs[at]).toBeGreaterThan(0);
    expect(Math.abs(logp[r] - Math.log(ref.probs[at]))).toBeLessThan(1e-5);
    expect(Math.abs(logpRaw[r] - ref.rawLogp[at])).toBeLessThan(1e-5);
  });
}

/** Random per-row parameters with masks and histories, drawn from one seed. */
function randomOptions(rows: number, vocab: number, seed: number): SamplingOptions {
  const random = seededRandom(seed);
  const pick = <T>(values: T[]) => values[Math.floor(random() * values.length)];
  const perRow = (values: number[]) => Float32Array.from({ length: rows }, () => pick(values));
  const offsets = Int32Array.from({ length: rows + 1 }, (_, r) => r * 8);
  return {
    seed: seed * 7919, step: seed,
    temperature: perRow([0.5, 0.8, 1, 1.3]),
    topK: Int32Array.from({ length: rows }, () => pick([0, 1, 2, 7, 40, vocab])),
    topP: perRow([1, 0.95, 0.8, 0.5, 0.1]),
    minP: perRow([0, 0, 0.02, 0.2]),
    repetitionPenalty: perRow([1, 1.2, 0.8]),
    presencePenalty: perRow([0, 0.4, -0.3]),
    frequencyPenalty: perRow([0, 0.1]),
    history: { ids: randomInts(rows * 8, vocab, seed + 1), offsets },
    // token 0 is never denied, so every row keeps an allowed token
    deny: vocab > 1
      ? { ids: randomInts(rows * 3, vocab - 1, seed + 2).map((t) => t + 1), offsets: Int32Array.from({ length: rows + 1 }, (_, r) => r * 3) }
      : undefined,
  };
}

describe('sample: exact set semantics against the sort-based reference', () => {
  it('random logits and parameters (fast-check, seed 42)', () => {
    const shapes = fc.record({ rows: fc.integer({ min: 1, max: 12 }), vocab: fc.integer({ min: 1, max: 3000 }),
      seed: fc.integer({ min: 1, max: 1e6 }), ties: fc.boolean() });
    fc.assert(fc.property(shapes, ({ rows, vocab, seed, ties }) => {
      const logits = randomNormal(rows * vocab, 2, seed); // [B, V]
      if (ties) logits.forEach((v, i) => (logits[i] = Math.round(v * 2) / 2));
      expectSameDistribution(logits, vocab, randomOptions(rows, vocab, seed));
    }), { seed: 42, numRuns: 60 });
  });

  it.each([[32768, 1], [151936, 2]])('real vocabulary sizes V=%i', (vocab, seed) => {
    const rows = 4;
    expectSameDistribution(randomNormal(rows * vocab, 2, seed), vocab,
      { topK: Int32Array.of(0, 50, 0, 1000), topP: Float32Array.of(0.9, 0.95, 1, 0.5), minP: 0.001 });
  });

  it('all filters off is plain softmax sampling', () => {
    const logits = randomNormal(3 * 500, 1.5, 9);
    const probs = samplingProbsSync(logits, 500, { temperature: 0.7 });
    const ref = samplingReference(logits, 500, { temperature: 0.7 });
    probs.forEach((p, i) => expect(Math.abs(p - Math.exp(ref.rawLogp[i]))).toBeLessThan(1e-6));
    const { logp, logpRaw } = sampleSync(logits, 500, { temperature: 0.7 });
    logp.forEach((v, r) => expect(Math.abs(v - logpRaw[r])).toBeLessThan(1e-6));
  });
});

describe('sample: greedy, top-1 and determinism', () => {
  const rows = 32;
  const vocab = 4099;
  const logits = randomNormal(rows * vocab, 3, 11);
  const argmax = Int32Array.from({ length: rows }, (_, r) => {
    const row = logits.subarray(r * vocab, (r + 1) * vocab);
    return row.indexOf(row.reduce((a, b) => Math.max(a, b), -Infinity));
  });

  it('temperature 0 and topK = 1 give the argmax', () => {
    expect(sampleSync(logits, vocab, { temperature: 0 }).tokens).toEqual(argmax);
    expect(sampleSync(logits, vocab, { topK: 1, seed: 5 }).tokens).toEqual(argmax);
    expect(sampleSync(new Float32Array([1, 3, 3, 2]), 4, { temperature: 0 }).tokens).toEqual(Int32Array.of(1)); // lowest id
  });

  it('bitwise identical for 1 and 2 threads and across calls; step changes the draw', async () => {
    const options = { ...randomOptions(rows, vocab, 3), history: undefined, deny: undefined };
    setThreads(1);
    const one = sampleSync(logits, vocab, options);
    setThreads(2);
    const two = sampleSync(logits, vocab, options);
    const again = await sample(logits, vocab, options);
    expect(two).toEqual(one);
    expect(again).toEqual(one);
    expect(sampleSync(logits, vocab, { ...options, step: 4 }).tokens).not.toEqual(one.tokens);
    expect(sampleSync(logits, vocab, { ...options, seed: 2n ** 63n }).tokens).not.toEqual(one.tokens);
  });
});

describe('sample: rows in a batch', () => {
  it('each row of a batch gets the bits it gets alone (its maximum read by the previous row\'s exp pass)', () => {
    const vocab = 300, rows = 40; // 40 rows of 300: one block of rows, every row after the first reads its successor
    const logits = randomNormal(rows * vocab, 2, 9);
    logits.fill(0, 3 * vocab, 4 * vocab); // a row whose maximum is ±0
    logits[3 * vocab + 7] = -0;
    logits.fill(-Infinity, 5 * vocab, 6 * vocab - 1); // one finite token
    for (const options of [{ topP: 0.9 }, { temperature: 0.7 }, { topK: 5, topP: 0.95 }, { temperature: 0, topP: 0.5 }]) {
      const batch = samplingProbsSync(logits, vocab, options);
      for (let r = 0; r < rows; r++) {
        const alone = samplingProbsSync(logits.subarray(r * vocab, (r + 1) * vocab), vocab, options);
        expect(Buffer.from(alone.buffer).equals(Buffer.from(batch.buffer, r * vocab * 4, vocab * 4))).toBe(true);
      }
    }
  });
});

describe('sample: edge cases', () => {
  it('V = 1, topK >= V, all but one masked, -Infinity and huge logits', () => {
    expect(sampleSync(new Float32Array([0.5, -2]), 1).tokens).toEqual(Int32Array.of(0, 0));
    const row = randomNormal(100, 1, 4);
    expect(sampleSync(row, 100, { topK: 100, seed: 3 })).toEqual(sampleSync(row, 100, { seed: 3 }));
    expect(sampleSync(row, 100, { topK: 1000, seed: 3 })).toEqual(sampleSync(row, 100, { seed: 3 }));
    const only = { ids: Int32Array.of(69), offsets: Int32Array.of(0, 1) };
    expect(sampleSync(row, 100, { allow: only }).tokens).toEqual(Int32Array.of(69));
    const allBut = { ids: Int32Array.from({ length: 99 }, (_, i) => (i < 69 ? i : i + 1)), offsets: Int32Array.of(0, 99) };
    const denied = sampleSync(row, 100, { deny: allBut });
    expect(denied.tokens).toEqual(Int32Array.of(69));
    expect(denied.logp[0]).toBe(0);
    const negInf = new Float32Array(100).fill(-Infinity);
    negInf[42] = -5;
    expect(sampleSync(negInf, 100).tokens).toEqual(Int32Array.of(42));
    const huge = new Float32Array(100).fill(-3e38);
    huge[17] = 3e38;
    huge[18] = 3e38;
    const probs = samplingProbsSync(huge, 100, { topP: 0.6 });
    expect([probs[17], probs[18]]).toEqual([0.5, 0.5]); // tied at the cut: both kept
    expect([17, 18]).toContain(sampleSync(huge, 100, { topP: 0.6 }).tokens[0]);
  });
});

describe('sample: typed errors and a live process', () => {
  const logits = randomNormal(3 * 100, 1, 5);

  it('a NaN row and a fully masked row are named', async () => {
    const bad = logits.slice();
    bad[150] = NaN;
    expect(() => sampleSync(bad, 100)).toThrow(/row 1 contains NaN/);
    expect(codeOf(() => sampleSync(bad, 100))).toBe('GRPO_NON_FINITE');
    await expect(sample(bad, 100)).rejects.toBeInstanceOf(GrpoError);
    const allow = new Uint32Array(3 * 4).fill(0xffffffff);
    allow.fill(0, 8, 12);
    expect(() => sampleSync(logits, 100, { allow })).toThrow(/row 2 has no allowed token/);
    expect(codeOf(() => sampleSync(logits, 100, { allow }))).toBe('GRPO_VALUE_RANGE');
  });

  it('bad options name the argument', async () => {
    expect(codeOf(() => sampleSync(logits, 100, { topP: Float32Array.of(0.5, 1.5, 1) }))).toBe('GRPO_VALUE_RANGE');
    expect(() => sampleSync(logits, 100, { topP: Float32Array.of(0.5, 1.5, 1) })).toThrow(/topP\[1\]/);
    expect(codeOf(() => sampleSync(logits, 100, { temperature: -1 }))).toBe('GRPO_VALUE_RANGE');
    expect(codeOf(() => sampleSync(logits, 100, { topK: 2.5 }))).toBe('GRPO_VALUE_RANGE');
    expect(codeOf(() => sampleSync(logits, 100, { topk: 5 } as SamplingOptions))).toBe('GRPO_UNKNOWN_OPTION');
    expect(codeOf(() => sampleSync(logits, 7))).toBe('GRPO_SHAPE_MISMATCH');
    expect(codeOf(() => sampleSync(new Float64Array(300) as unknown as Float32Array, 100))).toBe('GRPO_INVALID_ARGUMENT');
    expect(codeOf(() => sampleSync(logits, 100, { history: { ids: Int32Array.of(100), offsets: Int32Array.of(0, 1, 1, 1) } })))
      .toBe('GRPO_INDEX_RANGE');
    expect(codeOf(() => sampleSync(logits, 100, { allow: new Uint32Array(5) }))).toBe('GRPO_SHAPE_MISMATCH');
    expect(codeOf(() => sampleSync(logits, 100, { seed: -1 }))).toBe('GRPO_VALUE_RANGE');
    await expect(sample(logits, 100, { minP: 2 })).rejects.toMatchObject({ code: 'GRPO_VALUE_RANGE' });
    expect(sampleSync(logits, 100).tokens).toHaveLength(3); // still alive
  });
});
