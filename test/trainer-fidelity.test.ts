// The training loop against what it claims to reproduce (issue 14, "The training loop"): scoring at the
// rollout temperature, recipes that carry their preset whole, the KL stop at β = 0, the length reward and
// the CCR rows capped before any answer.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { presets } from '../lib/kernels/presets.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import type { Policy, ScoreOptions } from '../lib/policy/policy.js';
import { RECIPE_NAMES } from '../lib/trainer/config.js';
import { trainStep } from '../lib/trainer/loop.js';
import { resolveConfig, resolvedOptions } from '../lib/trainer/recipes.js';
import { rowMask } from '../lib/trainer/rollout.js';
import { arithmeticData, ccrTask } from '../lib/trainer/task-ccr.js';
import { createTask } from '../lib/trainer/tasks.js';
import { resume } from '../lib/trainer/resume.js';
import { train } from '../lib/trainer/train.js';
import { rolloutOf, tempRunRoot, tinyMoviesDir, tinyPolicy, tinyTokenizer } from './helpers/trainer.js';

interface Seen { temperature?: number; logp: Float32Array[] }

/** `policy` behind the Policy interface, recording the sampled log-probs and every score and training forward. */
function recording(policy: BuiltinPolicy) {
  const seen = { sampled: [] as Float32Array[], scored: [] as Seen[], stepped: [] as Seen[] };
  const copy = (o: ScoreOptions | undefined, logp: Float32Array[]): Seen => ({ temperature: o?.temperature, logp: logp.map((l) => l.slice()) });
  const wrapped: Policy = {
    config: policy.config, tokenizer: policy.tokenizer, device: policy.device,
    parameterCount: () => policy.parameterCount(),
    generate: async (prompts, o) => {
      const out = await policy.generate(prompts, o);
      seen.sampled = out.map((g) => g.logp);
      return out;
    },
    score: async (batch, o) => {
      const scores = await policy.score(batch, o);
      seen.scored.push(copy(o, scores.logp));
      return scores;
    },
    forward: async (batch, o) => {
      const out = await policy.forward(batch, o);
      seen.stepped.push(copy(o, out.scores.logp));
      return out;
    },
    backward: (handle, gradient) => policy.backward(handle, gradient),
    optimizerStep: (o) => policy.optimizerStep(o),
    clone: () => policy.clone(), save: (dir) => policy.save(dir), dispose: () => policy.dispose(),
  };
  return { policy: wrapped, seen };
}

function expectClose(actual: Float32Array[], expected: Float32Array[], tolerance: number): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((row, b) => {
    expect(row.length).toBe(expected[b].length);
    row.forEach((v, t) => expect(Math.abs(v - expected[b][t])).toBeLessThan(tolerance));
  });
}

const recommendBase = (moviesDir: string) => ({
  groups: 2, candidates: 3, learningRate: 5e-2, generation: { maxNewTokens: 12 }, rewards: { ranks: 3, catalog: 'none' as const }, data: { moviesDir },
});

describe('scoring at the rollout temperature (TRL and verl divide the logits by it in every log-prob of the loss and the KL)', () => {
  it('at temperature 0.8 the scored log-probs equal the sampled ones; the first update has ratio exactly 1 (μ = 1 and μ = 2)', async () => {
    const moviesDir = tinyMoviesDir([1, 2], 1);
    for (const policyUpdates of [1, 2]) {
      const config = resolveConfig({
        recipe: 'remark', ...recommendBase(moviesDir), policyUpdates, generation: { maxNewTokens: 12, temperature: 0.8 }, loss: { beta: 0.1, isLevel: 'token' },
      });
      const model = await tinyPolicy();
      const trained = recording(model);
      const reference = recording(await model.clone());
      const record = await trainStep({ config, policy: trained.policy, reference: reference.policy, task: createTask(config, model.tokenizer!), lossOptions: config.loss }, 0, 0);
      const [first] = trained.seen.stepped;
      expectClose(first.logp, trained.seen.sampled, 1e-4); // the sampled log-probs are the scored ones
      expect(first.temperature).toBe(0.8);
      expect(reference.seen.scored).toHaveLength(1);
      expect(reference.seen.scored[0].temperature).toBe(0.8);
      expectClose(reference.seen.scored[0].logp, trained.seen.sampled, 1e-4); // the reference is the policy at the start
      if (policyUpdates === 1) {
        expect(record.lossStats.ratioMean).toBe(1);
      } else {
        const [old] = trained.seen.scored;
        expect(old.temperature).toBe(0.8);
        old.logp.forEach((row, b) => expect(Array.from(row)).toEqual(Array.from(first.logp[b]))); // exp(logp − old) = 1 exactly
      }
      model.dispose();
    }
  });
});

it('a rollout temperature of 0 is refused by the config (log-probs are scored at logits / T)', () => {
  expect(() => resolveConfig({ recipe: 'grpo', generation: { temperature: 0 } })).toThrow(expect.objectContaining({ code: 'GRPO_VALUE_RANGE' }));
});

describe('recipes reproduce their preset whole', () => {
  const expected = {
    'rank-grpo': presets.rankGrpo, 'rank-grpo-requests': presets.rankGrpo, remark: presets.remark, 'remark-mean': presets.remark, ccr: presets.trl, grpo: presets.trl,
  } as const;
  for (const recipe of RECIPE_NAMES) {
    it(`${recipe}: advantages, loss and token advantages are ${expected[recipe].reproduces.split(':')[0]}'s`, () => {
      const options = resolvedOptions(resolveConfig({ recipe }));
      const preset = expected[recipe];
      expect(options.advantages).toEqual(preset.advantages);
      if (preset.tokenAdvantages) {
        expect(options.loss).toEqual({ ...preset.loss, numItems: null }); // the item count follows K (20 here)
        expect(options.tokenAdvantages).toEqual(preset.tokenAdvantages);
      } else {
        expect(options.loss).toEqual(preset.loss);
      }
    });
  }

  it('the length-shaping values reach the token advantages (an override changes the EOS advantage of a short list)', () => {
    const moviesDir = tinyMoviesDir([1], 1);
    const eosAdvantage = (earlyStop: number) => {
      const config = resolveConfig({ recipe: 'remark', ...recommendBase(moviesDir), groups: 1, candidates: 2, advantages: { earlyStop } });
      const task = createTask(config, tinyTokenizer());
      const prompts = task.prompts(0);
      const rollout = rolloutOf(['1. Heat (1995)', '1. Up (2009)'], [0, 0]);
      const eos = tinyTokenizer().eosTokenId!;
      rollout.completions = rollout.completions.map((ids) => Int32Array.from([...ids, eos]));
      rollout.width += 1;
      rollout.mask = rowMask(rollout.completions.map((c) => c.length), rollout.width);
      const { signal } = task.advantages(task.rewards(prompts, rollout).rewards, rollout);
      return signal.advantages[rollout.completions[0].length - 1];
    };
    expect(eosAdvantage(-0.1)).toBeCloseTo(-0.1, 6); // equal rewards: A = 0, plus the early-stop term at EOS
    expect(eosAdvantage(-0.5)).toBeCloseTo(-0.5, 6);
  });
});

describe('KL stop with β = 0', () => {
  it('monitors the KL to the frozen reference (without adding it to the loss) and stops on it', async () => {
    const moviesDir = tinyMoviesDir([1, 2, 1], 2);
    const config = resolveConfig({
      recipe: 'rank-grpo', ...recommendBase(moviesDir), steps: 6, loss: { beta: 0, isLevel: 'token' },
      validation: { every: 0, klThreshold: 1e-9 }, testPrompts: 1,
    });
    const runDir = join(tempRunRoot(), 'kl0');
    const result = await train({ config, policy: await tinyPolicy(), runDir, loadPolicy: (d) => BuiltinPolicy.load(d), skipTest: true });
    expect(result.stopReason).toBe('klThreshold');
    expect(result.steps).toBeLessThan(6);
    const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (const row of rows) {
      expect(Number.isFinite(row.lossStats.kl)).toBe(true);
      expect(row.kl).toBe(row.lossStats.kl);
      expect(row.loss).toBe(row.lossStats.policyLoss); // β = 0: the KL is not in the loss
    }
  });

  it('a resumed run reloads the reference the KL stop measures against', async () => {
    const moviesDir = tinyMoviesDir([1, 2, 1], 1);
    const config = resolveConfig({
      recipe: 'rank-grpo', ...recommendBase(moviesDir), steps: 3, checkpointEvery: 1, loss: { beta: 0, isLevel: 'token' },
      validation: { every: 0, klThreshold: 1e6 },
    });
    const runDir = join(tempRunRoot(), 'kl0-resume');
    const stop = { requested: false };
    const loadPolicy = (d: string) => BuiltinPolicy.load(d);
    await train({ config, policy: await tinyPolicy(), runDir, loadPolicy, stop, onEvent: (e) => e.type === 'step' && (stop.requested = true), skipTest: true });
    const resumed = await resume(runDir, { loadPolicy, skipTest: true });
    expect(resumed.steps).toBe(3);
    const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => r.step)).toEqual([1, 2, 3]);
    rows.forEach((row) => expect(Number.isFinite(row.lossStats.kl)).toBe(true));
  });

  it('a run whose config.json predates the new options resumes with their defaults (no length reward)', async () => {
    const moviesDir = tinyMoviesDir([1, 2, 1], 1);
    const config = resolveConfig({ recipe: 'remark', ...recommendBase(moviesDir), steps: 2, checkpointEvery: 1, rewards: { ranks: 3, catalog: 'none', lengthWeight: 0 }, validation: { every: 0 } });
    const runDir = join(tempRunRoot(), 'old-config');
    const stop = { requested: false };
    const loadPolicy = (d: string) => BuiltinPolicy.load(d);
    await train({ config, policy: await tinyPolicy(), runDir, loadPolicy, stop, onEvent: (e) => e.type === 'step' && (stop.requested = true), skipTest: true });
    const saved = JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8'));
    delete saved.rewards.lengthWeight;
    delete saved.advantages.unanswered;
    writeFileSync(join(runDir, 'config.json'), JSON.stringify(saved));
    await resume(runDir, { loadPolicy, skipTest: true });
    const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => r.step)).toEqual([1, 2]);
    expect(Number.isFinite(rows[1].reward)).toBe(true);
  });

  it('a step without a reference refuses a KL stop instead of ignoring it', async () => {
    const config = resolveConfig({ recipe: 'grpo', groups: 1, candidates: 2, loss: { beta: 0 }, validation: { klThreshold: 0.1 }, data: { arithmeticTrain: 10, arithmeticEval: 2 } });
    const policy = await tinyPolicy();
    await expect(trainStep({ config, policy, task: createTask(config, policy.tokenizer!), lossOptions: config.loss }, 0, 0))
      .rejects.toMatchObject({ code: 'GRPO_INVALID_ARGUMENT' });
  });
});

describe('the length reward', () => {
  it('enters the rank-1 reward with its weight (Rank-GRPO NaN-pads a scalar reward function to K, then nansums); lists of exactly K are counted', () => {
    const moviesDir = tinyMoviesDir([1], 1);
    const texts = ['1. Heat (1995)\n2. Up (2009)\n3. Alien (1979)', '1. Heat (1995)'];
    const run = (lengthWeight: number) => {
      const config = resolveConfig({ recipe: 'remark', ...recommendBase(moviesDir), groups: 1, candidates: 2, rewards: { ranks: 3, catalog: 'none', lengthWeight } });
      const task = createTask(config, tinyTokenizer());
      return task.rewards(task.prompts(0), rolloutOf(texts, [0, 0])) as { rewards: { rewards: Float32Array; hits: Float32Array }; stats: Record<string, number>; trl: Record<string, number> };
    };
    const plain = run(0), weighted = run(0.5);
    const length = [0, -Math.min(1, 2 / 3)]; // −min(1, |count − K| / K): 3 items → 0, 1 item → −2/3
    for (let b = 0; b < 2; b++) {
      for (let k = 0; k < 3; k++) {
        const added = k === 0 ? 0.5 * length[b] : 0;
        expect(weighted.rewards.rewards[b * 3 + k]).toBeCloseTo(plain.rewards.rewards[b * 3 + k] + added, 6);
      }
    }
    expect(weighted.stats.exactLengthLists).toBe(0.5);
    expect(weighted.stats.lengthReward).toBeCloseTo((length[0] + length[1]) / 2, 6);
    expect(weighted.trl['rewards/length/mean']).toBeCloseTo((length[0] + length[1]) / 2, 6);
  });

  it('defaults: 0 for rank-grpo (upstream has no length reward), 1 for the ReMaRk recipes (TRL reward_weights default)', () => {
    expect(resolveConfig({ recipe: 'rank-grpo' }).rewards.lengthWeight).toBe(0);
    expect(resolveConfig({ recipe: 'remark' }).rewards.lengthWeight).toBe(1);
    expect(resolveConfig({ recipe: 'remark-mean' }).rewards.lengthWeight).toBe(1);
  });
});

describe('CCR rows capped before any answer', () => {
  const texts = ['Problem 1: 1 + 2 = 3, then 3 + 3 = 6, then', 'Answer 1: \\boxed{3}\nAnswer 2: \\boxed{6}\nAnswer 3: \\boxed{9}'];
  const signalOf = (unanswered?: 'keep' | 'drop') => {
    const config = resolveConfig({ recipe: 'ccr', candidates: 2, groups: 1, advantages: unanswered ? { unanswered } : {}, data: { arithmeticTrain: 30, arithmeticEval: 3 } });
    const task = ccrTask(config, arithmeticData(config.data), tinyTokenizer());
    const rollout = rolloutOf(texts, [1, 0]);
    const { rewards } = task.rewards({ texts: ['p'], truths: [['3', '6', '9']] }, rollout);
    return { ...task.advantages(rewards, rollout).signal, length: rollout.completions[0].length };
  };

  it('by default keep their row, so their negative advantage reaches the update', () => {
    const { lossMask, advantages, length } = signalOf();
    for (let t = 0; t < length; t++) {
      expect(lossMask[t]).toBe(1);
      expect(advantages[t]).toBeLessThan(0);
    }
  });

  it('unanswered: "drop" drops the row (the previous behaviour)', () => {
    const { lossMask, length } = signalOf('drop');
    expect(Array.from(lossMask.subarray(0, length)).every((m) => m === 0)).toBe(true);
  });
});
