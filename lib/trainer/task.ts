// What the loop needs from a task (recommendation or CCR arithmetic): prompts per step, rewards,
// advantages on tokens, and evaluation on a split. One implementation per task in task-*.ts.
import type { RequestSeries } from '../eval/bootstrap.js';
import type { Policy } from '../policy/policy.js';
import type { Rollout } from './rollout.js';
import type { TrlRewardMetrics } from './trl-metrics.js';

/** Advantages on tokens and what the loss needs besides the scores. */
export interface Signal {
  /** advantages [B, T] */
  advantages: Float32Array;
  /** lossMask [B, T] */
  lossMask: Uint8Array;
  /** segments [B, T]: item index per token (−1 none, K = overflow), for item-level ratios */
  segments?: Int32Array;
}

/** Scalars logged per step (reward mean and std, zero-reward fractions, …). */
export type StepStats = Record<string, number>;

export interface Evaluation {
  /** metric → value over the split */
  values: Record<string, number>;
  /** metric → per-prompt series (bootstrap and paired differences) */
  series: Record<string, RequestSeries>;
  /** the greedy completions, in split order */
  completions: string[];
}

export type EvalSplit = 'validation' | 'test';

/** A step's rewards; `trl`: the reward metrics under TRL's names (`reward`, `reward_std`, `frac_reward_zero_std`, `rewards/<fn>/mean`). */
export interface TaskRewards<R> {
  rewards: R;
  stats: StepStats;
  trl?: TrlRewardMetrics;
}

/** A task bound to its data and config. `P` is one step's prompts, `R` its rewards. */
export interface Task<P = unknown, R = unknown> {
  /** The G prompts of step `step` (a pure function of the step: resuming needs nothing else). */
  prompts(step: number): P & { texts: string[] };
  /** The step's rewards, at once or (computed on worker threads, `rewards.threads`) as a promise. */
  rewards(prompts: P, rollout: Rollout): TaskRewards<R> | Promise<TaskRewards<R>>;
  advantages(rewards: R, rollout: Rollout): { signal: Signal; stats: StepStats };
  evaluate(policy: Policy, split: EvalSplit, count: number): Promise<Evaluation>;
  /** Sampler epoch of step `step` (logged). */
  epochOf(step: number): number;
  /** Ends what the task holds (its reward threads); the trainer calls it when a run it built the task for ends. */
  close?(): Promise<void>;
}

/** Mean and unbiased std of values. */
export function meanStd(values: ArrayLike<number>): { mean: number; std: number } {
  const n = values.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i];
  const mean = n === 0 ? NaN : sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (values[i] - mean) ** 2;
  return { mean, std: n > 1 ? Math.sqrt(squares / (n - 1)) : 0 };
}
