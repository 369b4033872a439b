// The policy-loss backward: the float64 reference against finite differences of its own loss for
// sampled loss type × IS level × aggregation × KL, the native kernel against the reference, and
// properties (masked tokens, micro-batch partitions, thread count) plus typed errors.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AGGREGATIONS, IS_LEVELS, KL_CLAMPS, KL_ESTIMATORS, LOSS_TYPES, policyLossSync, resolveLossOptions,
  type PolicyLossInput, type PolicyLossOptions,
} from '../lib/kernels/loss.js';
import { policyLossReference, type LossReferenceInput } from '../lib/reference/loss.js';
import { setThreads } from '../lib/runtime.js';
import { expectClose } from './helpers/close.js';
import { codeOf } from './helpers/errors.js';
import { randomInts, randomNormal } from './helpers/random.js';

const K = 3;
const STOP_GRADIENT_WEIGHTS = new Set(['cispoCap', 'cispoClamp', 'vespo']);

function randomInput(rows: number, cols: number, seed: number, perToken: boolean): PolicyLossInput {
  const logp = Float32Array.from(randomNormal(rows * cols, 0.5, seed), (x) => -1 + x);
  const oldLogp = Float32Array.from(randomNormal(rows * cols, 0.3, seed + 1), (x, i) => logp[i] + x);
  const refLogp = Float32Array.from(randomNormal(rows * cols, 0.3, seed + 2), (x, i) => logp[i] + x);
  const mask = Uint8Array.from(randomInts(rows * cols, 5, seed + 3), (x) => (x > 0 ? 1 : 0));
  const advantages = randomNormal(perToken ? rows * cols : rows, 1, seed + 4);
  const segments = Int32Array.from(randomInts(rows * cols, K + 2, seed + 5), (s) => s - 1);
  const entropy = Float32Array.from(randomNormal(rows * cols, 1, seed + 6), Math.abs);
  return { shape: [rows, cols], logp, oldLogp, refLogp, advantages, mask, segments, entropy };
}

const asReference = (x: PolicyLossInput, logp: ArrayLike<number> = x.logp, oldLogp = x.oldLogp): LossReferenceInput =>
  ({ ...x, rows: x.shape[0], cols: x.shape[1], logp, oldLogp });

const options = fc.record({
  lossType: fc.constantFrom(...LOSS_TYPES),
  isLevel: fc.constantFrom(...IS_LEVELS),
  aggregation: fc.constantFrom(...AGGREGATIONS),
  beta: fc.constantFrom(0, 0.05),
  klEstimator: fc.constantFrom(...KL_ESTIMATORS),
  klClamp: fc.constantFrom(...KL_CLAMPS),
  klBiasCorrection: fc.boolean(),
  epsilonHigh: fc.constantFrom(null, 0.28),
  delta: fc.constantFrom(null, 1.5),
  dualClipC: fc.constantFrom(null, 3),
  logRatioClamp: fc.constantFrom(null, 0.4, 20),
  topEntropyQuantile: fc.constantFrom(1, 0.5),
  accumulationSteps: fc.constantFrom(1, 2),
}).map((o): PolicyLossOptions => ({
  ...o,
  // TRL luspo's all-positions mean has no item level (padding has no item): it runs at the sequence level.
  isLevel: o.aggregation === 'allPositionsLengthWeighted' && o.isLevel === 'item' ? 'sequence' : o.isLevel,
  numItems: K, maxCompletionLength: 9, tokenCount: 11,
}));

const cases = fc.record({
  options,
  rows: fc.integer({ min: 1, max: 4 }),
  cols: fc.integer({ min: 1, max: 7 }),
  seed: fc.integer({ min: 1, max: 1e6 }),
  perToken: fc.boolean(),
  onPolicy: fc.boolean(),
});

/** Central differences of the reference loss; with stop-gradient weights, old moves with logp so r stays fixed. */
function finiteDifferences(x: PolicyLossInput, o: PolicyLossOptions, holdRatio: boolean): Float64Array {
  const resolved = resolveLossOptions(o);
  const logp = Float64Array.from(x.logp);
  const old = x.oldLogp ? Float64Array.from(x.oldLogp) : undefined;
  const h = 1e-6;
  return Float64Array.from(logp, (_, i) => {
    const at = (step: number) => {
      const l = Float64Array.from(logp);
      const ol = old ? Float64Array.from(old) : undefined;
      l[i] += step;
      if (holdRatio && ol) ol[i] += step;
      return policyLossReference(asReference(x, l, ol), resolved, K).loss;
    };
    return (at(h) - at(-h)) / (2 * h);
  });
}

/**
 * The same gradient as an ordinary derivative: on-policy old = sg(logp) becomes old held at logp, and
 * sequence-token weights logp − sg(logp) + sg(s_i) become token weights against old' = logp − s_i.
 */
function stopGradientsHeld(x: PolicyLossInput, o: PolicyLossOptions): [PolicyLossInput, PolicyLossOptions] {
  const [rows, cols] = x.shape;
  const old = x.oldLogp ?? x.logp;
  if (o.isLevel !== 'sequenceToken' || o.lossType === 'geoMean') return [{ ...x, oldLogp: Float32Array.from(old) }, o];
  const held = new Float32Array(rows * cols);
  for (let b = 0; b < rows; b++) {
    let sum = 0;
    let n = 0;
    for (let i = b * cols; i < (b + 1) * cols; i++) if (x.mask[i]) { sum += x.logp[i] - old[i]; n++; }
    for (let i = b * cols; i < (b + 1) * cols; i++) held[i] = x.logp[i] - sum / Math.max(n, 1);
  }
  return [{ ...x, oldLogp: held }, { ...o, isLevel: 'token' }];
}

describe('policy-loss backward', () => {
  it('the reference gradient equals finite differences for every loss type × IS level × aggregation (sampled)', () => {
    fc.assert(fc.property(cases, ({ options: o, rows, cols, seed, perToken, onPolicy }) => {
      const sg = STOP_GRADIENT_WEIGHTS.has(o.lossType!);
      const opts = sg ? { ...o, beta: 0 } : o; // stop-gradient weights: hold r fixed, so no KL here
      const x = randomInput(rows, cols, seed, perToken);
      const input = onPolicy ? { ...x, oldLogp: undefined } : x;
      const { grad } = policyLossReference(asReference(input), resolveLossOptions(opts), K);
      const [held, heldOptions] = stopGradientsHeld(input, opts);
      expectClose(grad, finiteDifferences(held, heldOptions, sg), { atol: 1e-6, rtol: 1e-4 });
    }), { seed: 11, numRuns: 400 });
  });

  it('the native loss and gradient match the float64 reference', () => {
    fc.assert(fc.property(cases, ({ options: o, rows, cols, seed, perToken, onPolicy }) => {
      const x = randomInput(rows, cols, seed, perToken);
      const input = onPolicy ? { ...x, oldLogp: undefined } : x;
      const native = policyLossSync(input, o);
      const reference = policyLossReference(asReference(input), resolveLossOptions(o), K);
      expectClose([native.loss], [reference.loss], { atol: 1e-5, rtol: 1e-4 });
      expectClose(native.gradLogp, reference.grad, { atol: 1e-6, rtol: 1e-4 });
    }), { seed: 12, numRuns: 400 });
  });

  it('the gradient is zero on masked tokens, whose values are never read', () => {
    fc.assert(fc.property(cases, ({ options: o, rows, cols, seed, perToken }) => {
      fc.pre(o.aggregation !== 'allPositionsLengthWeighted'); // reads padding by design (TRL luspo)
      const x = randomInput(rows, cols, seed, perToken);
      const poisoned = { ...x, logp: x.logp.map((v, i) => (x.mask[i] ? v : NaN)) };
      const { gradLogp, loss } = policyLossSync(poisoned, o);
      x.mask.forEach((m, i) => { if (!m) expect(gradLogp[i]).toBe(0); });
      expect(loss).toBe(policyLossSync(x, o).loss);
    }), { seed: 13, numRuns: 200 });
  });

  it('with a global token count any micro-batch split sums to the full-batch loss and gradient', () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 6 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 1e6 }), (rows, cols, seed) => {
      const x = randomInput(rows, cols, seed, true);
      const tokenCount = Math.max(1, x.mask.reduce((s, m) => s + m, 0));
      const split = 1 + (seed % (rows - 1));
      const part = (from: number, to: number) => policyLossSync({
        shape: [to - from, cols], logp: x.logp.slice(from * cols, to * cols), oldLogp: x.oldLogp!.slice(from * cols, to * cols),
        advantages: x.advantages.slice(from * cols, to * cols), mask: x.mask.slice(from * cols, to * cols),
      }, { tokenCount });
      const full = policyLossSync({ ...x, refLogp: undefined, segments: undefined, entropy: undefined }, { tokenCount });
      const a = part(0, split);
      const b = part(split, rows);
      expectClose([a.loss + b.loss], [full.loss], { atol: 1e-6, rtol: 1e-5 });
      expectClose([...a.gradLogp, ...b.gradLogp], full.gradLogp);
    }), { seed: 14, numRuns: 100 });
  });

  it('results are bitwise equal for 1 and 2 threads', () => {
    const x = randomInput(96, 512, 21, true);
    const o = { isLevel: 'item', beta: 0.04, aggregation: 'seqMeanTokenMean', numItems: K } as const;
    setThreads(1);
    const one = policyLossSync(x, o);
    setThreads(2);
    const two = policyLossSync(x, o);
    setThreads(0);
    expect(two.loss).toBe(one.loss);
    expect(two.stats).toEqual(one.stats);
    expect(Buffer.from(two.gradLogp.buffer).equals(Buffer.from(one.gradLogp.buffer))).toBe(true);
  });
});

describe('policy-loss errors', () => {
  const x = randomInput(2, 3, 5, false);
  const code = (input: PolicyLossInput, o?: PolicyLossOptions) => codeOf(() => policyLossSync(input, o));

  it('gives typed errors for shapes, values, indices and options', () => {
    expect(code({ ...x, shape: [3, 3] })).toBe('GRPO_SHAPE_MISMATCH');
    expect(code({ ...x, advantages: new Float32Array(5) })).toBe('GRPO_SHAPE_MISMATCH');
    expect(code({ ...x, mask: new Uint8Array(5) })).toBe('GRPO_SHAPE_MISMATCH');
    expect(code({ ...x, oldLogp: new Float32Array(4) })).toBe('GRPO_SHAPE_MISMATCH');
    expect(code({ ...x, mask: new Uint8Array(6).fill(1), logp: Float32Array.of(0, NaN, 0, 0, 0, 0) })).toBe('GRPO_NON_FINITE');
    expect(code({ ...x, mask: new Uint8Array(6).fill(1), advantages: Float32Array.of(Infinity, 0) })).toBe('GRPO_NON_FINITE');
    expect(code({ ...x, mask: new Uint8Array(6).fill(1), segments: Int32Array.of(0, -2, 0, 0, 0, 0) }, { isLevel: 'item' })).toBe('GRPO_INDEX_RANGE');
    expect(code({ ...x, segments: undefined }, { isLevel: 'item' })).toBe('GRPO_INVALID_ARGUMENT');
    expect(code({ ...x, refLogp: undefined }, { beta: 0.1 })).toBe('GRPO_INVALID_ARGUMENT');
    expect(code({ ...x, entropy: undefined }, { topEntropyQuantile: 0.5 })).toBe('GRPO_INVALID_ARGUMENT');
    expect(code(x, { aggregation: 'tokenSumOverBL' })).toBe('GRPO_INVALID_ARGUMENT');
    expect(code(x, { epsilonLow: -0.1 })).toBe('GRPO_VALUE_RANGE');
    expect(code(x, { dualClipC: 0.5 })).toBe('GRPO_VALUE_RANGE');
    expect(code(x, { lossType: 'ppo' as 'clip' })).toBe('GRPO_VALUE_RANGE');
    expect(code(x, { epsilon: 0.2 } as PolicyLossOptions)).toBe('GRPO_UNKNOWN_OPTION');
    expect(code({ ...x, logp: Array.from(x.logp) as unknown as Float32Array })).toBe('GRPO_INVALID_ARGUMENT');
  });

  it('an empty mask gives 0 (TRL) or NaN (verl)', () => {
    const empty = { ...x, mask: new Uint8Array(6) };
    expect(policyLossSync(empty, { aggregation: 'localTokenMean' }).loss).toBe(0);
    expect(policyLossSync(empty, { aggregation: 'localTokenMean', emptyBatch: 'nan' }).loss).toBeNaN();
  });
});
