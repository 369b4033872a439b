// metrics.jsonl under TRL's names: each quantity computed as the upstream trainer computes it (expected
// values worked out by hand from the upstream formula cited beside each), and the rows a run writes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PolicyLossStats } from '../lib/kernels/loss.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { rowMask, type Rollout } from '../lib/trainer/rollout.js';
import { arithmeticData, ccrTask } from '../lib/trainer/task-ccr.js';
import { train } from '../lib/trainer/train.js';
import { rankRewardMetrics, rewardFunctionMeans, sequenceRewardMetrics, trlStepMetrics } from '../lib/trainer/trl-metrics.js';
import { tempRunRoot, tinyMoviesDir, tinyPolicy, tinyTokenizer } from './helpers/trainer.js';

describe('TRL HEAD reward metrics (trl/trainer/grpo_trainer.py L2679–2720, L2744–2750)', () => {
  it('reward = nanmean, reward_std = nanstd (ddof 1) of the batch, frac_reward_zero_std = share of samples whose group std is 0', () => {
    // groups [1, 0, 0, 1] and [2, 2, 2, 2]: mean 1.25; Σ(r − 1.25)² = 2·0.0625 + 2·1.5625 + 4·0.5625 = 5.5, std = √(5.5 / 7)
    const m = sequenceRewardMetrics(Float32Array.of(1, 0, 0, 1, 2, 2, 2, 2), 4, 'group');
    expect(m.reward).toBeCloseTo(1.25, 7);
    expect(m.reward_std).toBeCloseTo(Math.sqrt(5.5 / 7), 7);
    expect(m.frac_reward_zero_std).toBe(0.5);
  });

  it('NaN rewards (every function returned None) are left out of the mean and std', () => {
    const m = sequenceRewardMetrics(Float32Array.of(1, NaN, 3, 3), 2, 'group');
    expect(m.reward).toBeCloseTo(7 / 3, 7);
    expect(m.reward_std).toBeCloseTo(Math.sqrt(((1 - 7 / 3) ** 2 + 2 * (3 - 7 / 3) ** 2) / 2), 7);
    expect(m.frac_reward_zero_std).toBe(0.5); // [1, NaN] has a one-value nanstd (NaN: not close to 0); [3, 3] has 0
  });

  it('one generation per prompt (TRL eval): the group std is 0, so every sample counts in frac_reward_zero_std', () => {
    expect(sequenceRewardMetrics(Float32Array.of(1, 0, 2), 1, 'group').frac_reward_zero_std).toBe(1);
  });

  it('scale "batch": the zero-std test reads the batch std', () => {
    expect(sequenceRewardMetrics(Float32Array.of(1, 1, 0, 1), 2, 'batch').frac_reward_zero_std).toBe(0);
    expect(sequenceRewardMetrics(Float32Array.of(2, 2, 2, 2), 2, 'batch').frac_reward_zero_std).toBe(1);
  });

  it('rewards/<fn>/mean is the nanmean of each function', () => {
    expect(rewardFunctionMeans({ accuracy: [1, 0, NaN], format: Float32Array.of(0.5, 0.5) })).toEqual({ 'rewards/accuracy/mean': 0.5, 'rewards/format/mean': 0.5 });
  });
});

describe('Rank-GRPO reward metrics (yaochenzhu/Rank-GRPO libs/trl/rank_grpo_trainer.py L1796–1797, L1883–1886)', () => {
  it('mean of the (group, rank) means and stds; a group counts as zero-std when its rank-averaged std is 0', () => {
    // G = 2, S = 2, K = 2. Group 0: rank 1 [1, 0] (mean 0.5, std √0.5), rank 2 [0, 0]. Group 1: all 1.
    const m = rankRewardMetrics(Float32Array.of(1, 0, 0, 0, 1, 1, 1, 1), 2, 2);
    expect(m.reward).toBeCloseTo((0.5 + 0 + 1 + 1) / 4, 7);
    expect(m.reward_std).toBeCloseTo(Math.sqrt(0.5) / 4, 7);
    expect(m.frac_reward_zero_std).toBe(0.5);
  });
});

describe('the loss and generation names (trl/trainer/grpo_trainer.py L2224–2240, L3229–3249)', () => {
  const stats: PolicyLossStats = {
    policyLoss: 0.5, kl: 0.02, clipRatioLow: 0.1, clipRatioHigh: 0.2, clipRatioRegion: 0.3, dualClipRatio: 0,
    ratioMean: 1, ratioMin: 0.9, ratioMax: 1.1, entropy: 2.5, ppoKl: 0, tokens: 10,
  };
  const input = {
    rewards: { reward: 1, reward_std: 0.5, frac_reward_zero_std: 0.25, 'rewards/accuracy/mean': 0.4 },
    lossStats: stats, lengths: [4, 6, 2, 8], truncated: Uint8Array.of(0, 1, 0, 1), loss: 0.52, gradNorm: 3, learningRate: 1e-6, numTokens: 120,
  };

  it('maps the loss kernel statistics one to one and computes the completion metrics', () => {
    expect(trlStepMetrics(input)).toEqual({
      reward: 1, reward_std: 0.5, frac_reward_zero_std: 0.25, 'rewards/accuracy/mean': 0.4,
      'completions/mean_length': 5, 'completions/clipped_ratio': 0.5,
      kl: 0.02, entropy: 2.5, 'clip_ratio/low_mean': 0.1, 'clip_ratio/high_mean': 0.2, 'clip_ratio/region_mean': 0.3,
      grad_norm: 3, learning_rate: 1e-6, num_tokens: 120, loss: 0.52,
    });
  });

  it('kl is absent when the step measured none (TRL logs kl only with β ≠ 0)', () => {
    expect('kl' in trlStepMetrics({ ...input, lossStats: { ...stats, kl: NaN } })).toBe(false);
  });
});

describe('zeroRewardGroups (all candidates 0) and frac_reward_zero_std (all candidates equal) are different quantities', () => {
  it('a CCR group whose candidates all earn the same non-zero reward counts in frac_reward_zero_std only', () => {
    const config = resolveConfig({ recipe: 'ccr', candidates: 2, groups: 1, data: { arithmeticTrain: 30, arithmeticEval: 3 } });
    const task = ccrTask(config, arithmeticData(config.data), tinyTokenizer());
    const texts = ['Answer 1: \\boxed{3}\nAnswer 2: \\boxed{6}\nAnswer 3: \\boxed{9}', 'Answer 1: \\boxed{3}\nAnswer 2: \\boxed{6}\nAnswer 3: \\boxed{9}'];
    const completions = texts.map((t) => tinyTokenizer().encode(t).ids);
    const width = Math.max(...completions.map((c) => c.length));
    const rollout: Rollout = {
      groups: 1, candidates: 2, promptIds: [Int32Array.of(0), Int32Array.of(0)], completions, texts, truncated: Uint8Array.of(0, 0), width,
      mask: rowMask(completions.map((c) => c.length), width),
    };
    const { stats, trl } = task.rewards({ texts: ['p'], truths: [['3', '6', '9']] }, rollout);
    expect(stats.zeroRewardGroups).toBe(0);
    expect(trl!.frac_reward_zero_std).toBe(1);
    expect(trl!['rewards/accuracy/mean']).toBe(1);
  });
});

describe('metrics.jsonl rows', () => {
  it('keep their structure and carry the TRL names; num_tokens accumulates prompt + completion tokens', async () => {
    const moviesDir = tinyMoviesDir([1, 2, 1], 1);
    const config = resolveConfig({
      recipe: 'remark', steps: 2, groups: 2, candidates: 3, learningRate: 1e-2, generation: { maxNewTokens: 8 },
      rewards: { ranks: 3, catalog: 'none' }, data: { moviesDir }, validation: { every: 0 },
    });
    const runDir = join(tempRunRoot(), 'trl');
    await train({ config, policy: await tinyPolicy(), runDir, loadPolicy: (d) => BuiltinPolicy.load(d), skipTest: true });
    const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    let tokens = 0;
    for (const row of rows) {
      tokens += row.tokens.prompt + row.tokens.completion;
      expect(row.num_tokens).toBe(tokens);
      expect(row.stats.rewardMean).toBeTypeOf('number'); // the trainer's own fields stay
      expect(row['completions/mean_length']).toBe(row.completionLength.mean);
      expect(row['completions/clipped_ratio']).toBe(row.truncationRate);
      expect(row['clip_ratio/region_mean']).toBe(row.lossStats.clipRatioRegion);
      expect(row.entropy).toBe(row.lossStats.entropy);
      expect(row.kl).toBe(row.lossStats.kl); // β = 1e-3: measured
      expect(row.grad_norm).toBe(row.gradNorm);
      expect(row.learning_rate).toBe(row.learningRate);
      for (const name of ['reward', 'reward_std', 'frac_reward_zero_std', 'rewards/rank/mean', 'rewards/length/mean', 'loss']) expect(row[name]).toBeTypeOf('number');
    }
  });
});
