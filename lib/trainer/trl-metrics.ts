// The quantities TRL's GRPOTrainer logs, under TRL's flat names, computed as TRL computes them: each row of
// metrics.jsonl carries them beside the trainer's own fields (docs/trainer.md, "Metrics a TRL user can read").
// Line numbers: huggingface/trl at f2cd577 (2026-07-24), yaochenzhu/Rank-GRPO at 0808d82.
import type { PolicyLossStats } from '../kernels/loss.js';

/** Reward metrics: `reward`, `reward_std`, `frac_reward_zero_std` and `rewards/<fn>/mean` per reward function. */
export type TrlRewardMetrics = Record<string, number>;

/** Every TRL name a metrics row carries. */
export interface TrlStepMetrics {
  reward: number;
  reward_std: number;
  frac_reward_zero_std: number;
  'completions/mean_length': number;
  'completions/clipped_ratio': number;
  /** absent when the step measured no KL (β = 0 and no KL stop), as TRL logs `kl` only with β ≠ 0 */
  kl?: number;
  entropy: number;
  'clip_ratio/low_mean': number;
  'clip_ratio/high_mean': number;
  'clip_ratio/region_mean': number;
  grad_norm: number;
  learning_rate: number;
  /** prompt + completion tokens of every step so far (resumes included) */
  num_tokens: number;
  loss: number;
  [rewardFunction: `rewards/${string}/mean`]: number;
}

/** torch.isclose(std, 0) with its default atol 1e-8 (NaN is never close). */
const isZero = (std: number) => Math.abs(std) <= 1e-8;

/** Mean and unbiased std (torch.std, ddof 1; NaN for fewer than two) of the non-NaN values. */
function nanMeanStd(values: ArrayLike<number>): { mean: number; std: number; n: number } {
  let n = 0, sum = 0;
  for (let i = 0; i < values.length; i++) if (!Number.isNaN(values[i])) (n++, (sum += values[i]));
  const mean = n === 0 ? NaN : sum / n;
  let squares = 0;
  for (let i = 0; i < values.length; i++) if (!Number.isNaN(values[i])) squares += (values[i] - mean) ** 2;
  return { mean, std: n > 1 ? Math.sqrt(squares / (n - 1)) : NaN, n };
}

/** Mean of the non-NaN values of each named reward function: TRL `rewards/<fn>/mean` (nanmean). */
export function rewardFunctionMeans(perFunction: Readonly<Record<string, ArrayLike<number>>>): TrlRewardMetrics {
  return Object.fromEntries(Object.entries(perFunction).map(([name, values]) => [`rewards/${name}/mean`, nanMeanStd(values).mean]));
}

/**
 * TRL HEAD's reward metrics of sequence rewards [B] in contiguous groups of `groupSize`
 * (trl/trainer/grpo_trainer.py L2679–2720, L2744–2750): `reward` = nanmean, `reward_std` = nanstd of the whole
 * batch, `frac_reward_zero_std` = share of samples whose scaling std is 0 (group std, a one-element group's std
 * being 0; the batch std with `scale: "batch"`).
 */
export function sequenceRewardMetrics(rewards: Float32Array, groupSize: number, scale: 'group' | 'batch' | 'none'): TrlRewardMetrics {
  const batch = nanMeanStd(rewards);
  let zero = 0;
  for (let start = 0; start < rewards.length; start += groupSize) {
    const group = rewards.subarray(start, start + groupSize);
    const std = scale === 'batch' ? (rewards.length > 1 ? batch.std : 0) : groupSize > 1 ? nanMeanStd(group).std : 0;
    if (isZero(std)) zero += group.length;
  }
  return { reward: batch.mean, reward_std: batch.std, frac_reward_zero_std: rewards.length === 0 ? NaN : zero / rewards.length };
}

/**
 * Rank-GRPO's reward metrics of rank rewards [G, S, K] (yaochenzhu/Rank-GRPO libs/trl/rank_grpo_trainer.py
 * L1796–1797, L1883–1886): `reward` = mean over (group, rank) of the group means, `reward_std` = mean over
 * (group, rank) of the group stds (ddof 1), `frac_reward_zero_std` = share of groups whose rank-averaged std is 0.
 */
export function rankRewardMetrics(rewards: Float32Array, candidates: number, ranks: number): TrlRewardMetrics {
  const groups = rewards.length / (candidates * ranks);
  const cell = new Float32Array(candidates);
  let meanSum = 0, stdSum = 0, zero = 0;
  for (let g = 0; g < groups; g++) {
    let groupStd = 0;
    for (let k = 0; k < ranks; k++) {
      for (let s = 0; s < candidates; s++) cell[s] = rewards[(g * candidates + s) * ranks + k];
      const { mean, std } = nanMeanStd(cell);
      meanSum += mean;
      stdSum += std;
      groupStd += std / ranks;
    }
    if (isZero(groupStd)) zero++;
  }
  const cells = groups * ranks;
  return { reward: meanSum / cells, reward_std: stdSum / cells, frac_reward_zero_std: zero / groups };
}

/** What one step provides besides its reward metrics. */
export interface TrlStepInput {
  rewards: TrlRewardMetrics;
  lossStats: PolicyLossStats;
  /** completion lengths [B] and truncated flags [B] (1 = hit the cap: TRL `is_truncated`) */
  lengths: readonly number[];
  truncated: Uint8Array;
  loss: number;
  gradNorm: number;
  learningRate: number;
  numTokens: number;
}

/**
 * One row's TRL names (trl/trainer/grpo_trainer.py L2224–2240 generation metrics, L3229–3249 loss metrics). The
 * loss metrics are the loss kernel's statistics of the last update, whose names map one to one.
 */
export function trlStepMetrics(input: TrlStepInput): TrlStepMetrics {
  const { lossStats: s, lengths } = input;
  const rows = lengths.length;
  return {
    ...input.rewards,
    reward: input.rewards.reward,
    reward_std: input.rewards.reward_std,
    frac_reward_zero_std: input.rewards.frac_reward_zero_std,
    'completions/mean_length': lengths.reduce((a, b) => a + b, 0) / rows,
    'completions/clipped_ratio': input.truncated.reduce((a, b) => a + b, 0) / rows,
    ...(Number.isFinite(s.kl) && { kl: s.kl }),
    entropy: s.entropy,
    'clip_ratio/low_mean': s.clipRatioLow,
    'clip_ratio/high_mean': s.clipRatioHigh,
    'clip_ratio/region_mean': s.clipRatioRegion,
    grad_norm: input.gradNorm,
    learning_rate: input.learningRate,
    num_tokens: input.numTokens,
    loss: input.loss,
  };
}
