// Micro-batching with gradient accumulation (docs/trainer.md, "Memory: micro-batches"): the parameters after one and
// after three updates with microBatchTokens equal the one-batch result for every loss aggregation, within float32
// summation noise. Not bitwise: the weight gradients are GEMMs summing over the tokens in blocks of the GEMM's kc
// (native/kernels/gemm/gemm.cc), each block's sum added into dW, so a micro-batch boundary regroups those sums
// (embedding, norm and bias gradients add token by token in order and stay bitwise). The scores (old and reference
// log-probs, each row's logp and entropy) do not mix rows and are bitwise equal.
import { describe, expect, it } from 'vitest';
import { mulberry32, randomInt } from '../lib/data/rng.js';
import { GrpoError } from '../lib/errors.js';
import type { PolicyLossOptions } from '../lib/kernels/loss.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import type { SequenceBatch } from '../lib/policy/policy.js';
import { microBatchRanges, sliceBatch, sliceRows } from '../lib/trainer/micro-batch.js';
import { padRows, rowMask, type Rollout } from '../lib/trainer/rollout.js';
import type { Signal } from '../lib/trainer/task.js';
import { accumulateGradients, rolloutLoss, scoreInMicroBatches, type UpdateBatch } from '../lib/trainer/update.js';
import { trainStep } from '../lib/trainer/loop.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { createTask } from '../lib/trainer/tasks.js';
import { tinyConfig, tinyMoviesDir, tinyTokenizer } from './helpers/trainer.js';

const VOCAB = 97;
const GROUPS = 3, CANDIDATES = 4, B = GROUPS * CANDIDATES;
const LR = 1e-2;

const newPolicy = (eps = 1e-8) => BuiltinPolicy.create({ ...tinyConfig(VOCAB), numLayers: 2 }, { seed: 5, optimizer: { maxGradNorm: 0, eps } });

/** G groups × S candidates: each group's prompt shared, completions of 3–14 tokens, prompts of 4–9. */
function sequences(): SequenceBatch & { width: number } {
  const random = mulberry32(11);
  const ids = (n: number) => Int32Array.from({ length: n }, () => randomInt(random, VOCAB));
  const prompts = Array.from({ length: GROUPS }, () => ids(4 + randomInt(random, 6)));
  const completions = Array.from({ length: B }, () => ids(3 + randomInt(random, 12)));
  return { prompts: completions.map((_, b) => prompts[Math.floor(b / CANDIDATES)]), completions, width: Math.max(...completions.map((c) => c.length)) };
}

/** Per-token advantages, a loss mask with holes and one empty row (so the local and global token means differ from the per-row ones) and item segments. */
function signalOf(lengths: readonly number[], width: number): Signal {
  const random = mulberry32(3);
  const lossMask = rowMask(lengths, width);
  const advantages = new Float32Array(B * width), segments = new Int32Array(B * width).fill(-1);
  lengths.forEach((n, b) => {
    const a = random() * 2 - 1;
    for (let t = 0; t < n; t++) {
      advantages[b * width + t] = a + 0.1 * t;
      segments[b * width + t] = Math.floor(t / 4);
      if (random() < 0.15 || b === 5) lossMask[b * width + t] = 0; // row 5: no loss token (a micro-batch of its own weighs 0)
    }
  });
  return { advantages, lossMask, segments };
}

/** The update's batch: old log-probs from the start (μ > 1) perturbed so the ratios clip, and reference log-probs. */
async function updateBatch(policy: BuiltinPolicy): Promise<UpdateBatch> {
  const { width, ...batch } = sequences();
  const lengths = batch.completions.map((c) => c.length);
  const pad = (rows: Float32Array[]) => padRows(rows, width, (n) => new Float32Array(n));
  const scored = await policy.score(batch);
  const old = pad(scored.logp.map((row) => row.map((v, t) => v + 0.3 * Math.sin(7 * t + v))));
  const ref = pad(scored.logp.map((row) => row.map((v, t) => v - 0.2 * Math.cos(3 * t))));
  return { batch, rollout: { completions: batch.completions, width }, signal: signalOf(lengths, width), stored: { old, ref } };
}

/** Parameters after each of `steps` updates of the same batch (one optimizer step each). */
async function train(update: UpdateBatch, loss: PolicyLossOptions, microBatchTokens: number, steps: number) {
  const policy = newPolicy(EPS);
  const after: Float32Array[][] = [], losses: number[] = [];
  let gradient = new Float32Array(0);
  for (let s = 0; s < steps; s++) {
    const out = await accumulateGradients(policy, update, { loss, microBatchTokens, temperature: 1 });
    await policy.optimizerStep({ learningRate: LR });
    if (s === 0) gradient = policy.getOptimizerState().m.map((m) => m / (1 - 0.9)); // m = (1 − β1)·g after one step
    after.push(policy.getTensors().map((t) => t.data));
    losses.push(out.loss);
  }
  policy.dispose();
  return { after, losses, gradient };
}

function largestDifference(a: Float32Array[], b: Float32Array[]): number {
  let worst = 0;
  a.forEach((x, i) => x.forEach((v, j) => (worst = Math.max(worst, Math.abs(v - b[i][j])))));
  return worst;
}

const MODES: [string, PolicyLossOptions][] = [
  ['globalTokenMean (DAPO)', { aggregation: 'globalTokenMean', beta: 0.04 }],
  ['localTokenMean (BNPO) with accumulationSteps 2', { aggregation: 'localTokenMean', accumulationSteps: 2 }],
  ['seqMeanTokenMean (GRPO)', { aggregation: 'seqMeanTokenMean', beta: 0.04 }],
  ['seqMeanTokenSum', { aggregation: 'seqMeanTokenSum' }],
  ['tokenSumOverBL (Dr.GRPO)', { aggregation: 'tokenSumOverBL', maxCompletionLength: 16 }],
  ['tokenSumOverL', { aggregation: 'tokenSumOverL' }],
  ['allPositionsLengthWeighted', { aggregation: 'allPositionsLengthWeighted' }],
  ['item level (Rank-GRPO)', { isLevel: 'item', aggregation: 'seqMeanTokenMean' }],
  ['sequence level (GSPO)', { isLevel: 'sequence', aggregation: 'seqMeanTokenMean' }],
  ['geoMean (GMPO)', { lossType: 'geoMean' }],
  ['vespo', { lossType: 'vespo', aggregation: 'globalTokenMean' }],
  ['allPositionsLengthWeighted, emptyBatch nan', { aggregation: 'allPositionsLengthWeighted', emptyBatch: 'nan' }],
];

// Regrouped float32 sums differ by a few tens of ulps (2^-23 ≈ 1.2e-7) of the largest term: the gradient is compared
// relative to its largest element.
const GRADIENT_NOISE = 4e-6;
// AdamW with eps 1e-3 (above every |g| here, so its step is close to linear in g): the parameters (|w| < 1) stay
// within a few of their ulps. With eps 1e-8 a near-zero gradient element (a sum that cancels) has its step m/√v set by
// the noise itself, and such elements differ by up to a few % of LR (docs/trainer.md, "Memory: micro-batches").
const EPS = 1e-3;
const PARAMETER_NOISE = 1e-6;

describe('microBatchTokens: the one-batch update in bounded memory', async () => {
  const update = await updateBatch(newPolicy());
  const tokens = update.batch.prompts.map((p, b) => p.length + update.batch.completions[b].length);
  const longest = Math.max(...tokens), total = tokens.reduce((a, b) => a + b, 0);
  // one sequence per micro-batch; about two and a half (splits every group of 4); most of the batch; the whole batch
  const budgets = [longest, Math.ceil(2.5 * longest), total - 1, total];

  it('cuts the batch in order, each micro-batch within the budget, and a budget splitting a group is among them', () => {
    for (const budget of budgets) {
      const ranges = microBatchRanges(update.batch, budget);
      expect(ranges[0].start).toBe(0);
      expect(ranges.at(-1)!.end).toBe(B);
      ranges.forEach((r, i) => {
        if (i > 0) expect(r.start).toBe(ranges[i - 1].end);
        expect(tokens.slice(r.start, r.end).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(budget);
      });
    }
    expect(microBatchRanges(update.batch, total)).toHaveLength(1);
    expect(microBatchRanges(update.batch, budgets[1]).some((r) => r.start % CANDIDATES !== 0)).toBe(true);
  });

  it('refuses a budget below the longest sequence, naming it', () => {
    const at = tokens.indexOf(longest);
    const error = (() => { try { microBatchRanges(update.batch, longest - 1); } catch (e) { return e; } })();
    expect(error).toBeInstanceOf(GrpoError);
    expect(error).toMatchObject({ code: 'GRPO_VALUE_RANGE', message: expect.stringContaining(`sequence ${at} holds ${longest} tokens`) });
  });

  it('scores (old and reference log-probs) in micro-batches bitwise equal to one batch', async () => {
    const policy = newPolicy();
    const whole = await policy.score(update.batch);
    for (const budget of budgets) {
      const parts = await scoreInMicroBatches(policy, update.batch, budget, {});
      parts.logp.forEach((row, b) => expect(row).toEqual(whole.logp[b]));
      parts.entropy.forEach((row, b) => expect(row).toEqual(whole.entropy[b]));
    }
    policy.dispose();
  });

  it.each(MODES)('%s: the gradient, and the parameters after 1 and 3 updates, equal the one-batch ones within float32 summation noise', async (_, loss) => {
    const one = await train(update, loss, 0, 3);
    const largest = one.gradient.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
    expect(largest).toBeGreaterThan(0);
    for (const budget of budgets) {
      const micro = await train(update, loss, budget, 3);
      expect(largestDifference([micro.gradient], [one.gradient])).toBeLessThan(GRADIENT_NOISE * largest);
      expect(largestDifference(micro.after[0], one.after[0])).toBeLessThan(PARAMETER_NOISE);
      expect(largestDifference(micro.after[2], one.after[2])).toBeLessThan(PARAMETER_NOISE);
      expect(micro.losses[0]).toBe(one.losses[0]); // one loss call over the whole batch's (bitwise equal) scores
      micro.losses.forEach((l, s) => expect(Math.abs(l - one.losses[s])).toBeLessThan(1e-5 * Math.abs(one.losses[s])));
      if (budget === total) micro.after.forEach((params, s) => expect(largestDifference(params, one.after[s])).toBe(0));
    }
  });

  it('control: micro-batches each divided by their own counts give another update, far outside that noise', async () => {
    const loss: PolicyLossOptions = { aggregation: 'seqMeanTokenMean' };
    const one = await train(update, loss, 0, 1);
    const policy = newPolicy(EPS);
    for (const range of microBatchRanges(update.batch, budgets[1])) {
      const rows = (v: Float32Array | Uint8Array) => sliceRows(v, range, update.rollout.width);
      const forward = await policy.forward(sliceBatch(update.batch, range));
      const signal = { advantages: rows(update.signal.advantages) as Float32Array, lossMask: rows(update.signal.lossMask) as Uint8Array };
      const stored = { old: rows(update.stored.old!) as Float32Array };
      const rollout = { completions: update.batch.completions.slice(range.start, range.end), width: update.rollout.width };
      await policy.backward(forward.handle, rolloutLoss(signal, rollout, loss, stored, forward.scores));
    }
    await policy.optimizerStep({ learningRate: LR });
    expect(largestDifference(policy.getTensors().map((t) => t.data), one.after[0])).toBeGreaterThan(100 * PARAMETER_NOISE);
    policy.dispose();
  });

  it('refuses topEntropyQuantile < 1 (a quantile of the whole batch) with micro-batches, and takes it without', async () => {
    const loss: PolicyLossOptions = { topEntropyQuantile: 0.5 };
    await expect(train(update, loss, budgets[1], 1)).rejects.toMatchObject({ code: 'GRPO_UNSUPPORTED' });
    await expect(train(update, loss, 0, 1)).resolves.toBeDefined();
  });
});

describe('microBatchTokens in the trainer step', () => {
  it('the config refuses a budget below generation.maxNewTokens + 1 and topEntropyQuantile < 1 up front', () => {
    const moviesDir = tinyMoviesDir([1], 1);
    const base = { recipe: 'remark' as const, generation: { maxNewTokens: 40 }, data: { moviesDir } };
    expect(() => resolveConfig({ ...base, microBatchTokens: 40 })).toThrow(expect.objectContaining({
      code: 'GRPO_VALUE_RANGE', message: expect.stringContaining('generation.maxNewTokens + 1 = 41'),
    }));
    expect(resolveConfig({ ...base, microBatchTokens: 41 }).microBatchTokens).toBe(41);
    expect(() => resolveConfig({ ...base, microBatchTokens: 41, loss: { topEntropyQuantile: 0.2 } })).toThrow(expect.objectContaining({ code: 'GRPO_UNSUPPORTED' }));
    expect(resolveConfig({ ...base, loss: { topEntropyQuantile: 0.2 } }).microBatchTokens).toBe(0);
  });

  it('a step with old (μ = 2) and reference log-probs gives the one-batch step\'s rollout, loss and parameters', async () => {
    const moviesDir = tinyMoviesDir([1, 2, 1], 1);
    const records = [], params = [];
    for (const microBatchTokens of [0, 250]) {
      const config = resolveConfig({
        recipe: 'remark', groups: 2, candidates: 3, policyUpdates: 2, learningRate: 1e-2, microBatchTokens, generation: { maxNewTokens: 12 },
        rewards: { ranks: 3, catalog: 'none' }, data: { moviesDir }, loss: { beta: 0.04 },
      });
      const policy = BuiltinPolicy.create(tinyConfig(tinyTokenizer().vocabSize), { seed: 1, tokenizer: tinyTokenizer(), optimizer: { eps: EPS } });
      let forwards = 0;
      const forward = policy.forward.bind(policy);
      policy.forward = (batch, options) => (forwards++, forward(batch, options));
      // the task's signal (item segments included) with fixed advantages (the tiny model's rewards are all zero): b mod 3 − 1 on row b
      const real = createTask(config, policy.tokenizer!);
      const task = { ...real, advantages: (rewards: Parameters<typeof real.advantages>[0], rollout: Rollout) => {
        const { signal, stats } = real.advantages(rewards, rollout);
        return { signal: { ...signal, advantages: Float32Array.from(rollout.mask, (m, i) => m * ((Math.floor(i / rollout.width) % 3) - 1)) }, stats };
      } };
      records.push(await trainStep({ config, policy, reference: await policy.clone(), task, lossOptions: config.loss }, 0, 0));
      params.push(policy.getTensors().map((t) => t.data));
      if (microBatchTokens === 0) expect(forwards).toBe(2);
      else expect(forwards).toBeGreaterThan(2); // the budget splits the batch
    }
    const [one, micro] = records;
    expect(micro.tokens).toEqual(one.tokens);
    // the record is the second update's, after one optimizer step: its numbers carry the first step's noise
    expect(one.lossStats.kl).toBeGreaterThan(0);
    expect(Math.abs(micro.lossStats.kl - one.lossStats.kl)).toBeLessThan(1e-5 * one.lossStats.kl);
    expect(one.loss).not.toBe(0);
    expect(Math.abs(micro.loss - one.loss)).toBeLessThan(1e-5 * Math.abs(one.loss));
    expect(largestDifference(params[1], params[0])).toBeLessThan(PARAMETER_NOISE);
  });
});
