// Rank-GRPO's reward assembly (libs/trl/rank_grpo_trainer.py `_calculate_rewards` and the weighted
// nansum after it): several reward functions, each scalar or per rank, into the [N, K] rewards that
// rankAdvantages normalises per (group, rank).
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import * as check from '../validate.js';

/** A reward's "None": the completion was not scored. */
type Missing = null | undefined;

/**
 * One reward function's output for the N completions: a number per completion (a scalar function) or a
 * list of per-rank rewards per completion (a rank function; lists may be ragged). `null` / `undefined` /
 * NaN is None.
 */
export type RewardFunctionOutput = ReadonlyArray<number | Missing> | ReadonlyArray<ArrayLike<number> | Missing>;

/** Options of {@link assembleRankRewards}. */
export const RANK_REWARD_ASSEMBLY_OPTIONS = {
  weights: opt.opaque<ArrayLike<number>>('numbers [F]', 'Weight per reward function (Rank-GRPO `reward_weights`).', 'all 1'),
  ranks: opt.integer(undefined, 'K, the width of the result: shorter outputs are padded like ragged lists.', 1, undefined, { defaultDoc: 'the longest list' }),
};

export type RankRewardAssemblyOptions = opt.OptionsOf<typeof RANK_REWARD_ASSEMBLY_OPTIONS>;

export interface AssembledRankRewards {
  /** [N, K] Σ_f w_f·R[i, f, k], NaN counted as 0 (torch nansum): the rewards of rankAdvantages ([G, S, K]). */
  rewards: Float32Array;
  /** [N, F, K] each function's rewards, NaN where None or padded (Rank-GRPO `rewards_per_func`). */
  perFunction: Float32Array;
  /** N, the completions. */
  completions: number;
  /** F, the reward functions. */
  functions: number;
  /** K, the ranks. */
  ranks: number;
}

const FN = 'assembleRankRewards';

/** One function's output as rows of numbers (NaN for None); a scalar becomes a list of one. */
function rowsOf(output: RewardFunctionOutput, f: number, completions: number): number[][] {
  if (!Array.isArray(output)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} outputs[${f}] to be an array of rewards, one per completion`);
  }
  check.length(`${FN} outputs[${f}]`, output, completions, `[N] = [${completions}]`);
  const perRank = output.some((x) => x !== null && x !== undefined && typeof x !== 'number');
  return output.map((x: number | ArrayLike<number> | Missing, i) => {
    const name = `${FN} outputs[${f}][${i}]`;
    if (x === null || x === undefined) return perRank ? [] : [NaN];
    if (perRank !== (typeof x !== 'number')) {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${name} to be ${perRank ? 'a list of rewards' : 'a number'} like the other completions of reward function ${f}`);
    }
    return Array.from(typeof x === 'number' ? [x] : x, (v, k) => rewardValue(`${name}[${k}]`, v));
  });
}

function rewardValue(name: string, v: unknown): number {
  if (typeof v !== 'number') throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected a number for ${name} but received ${typeof v}`);
  if (v === Infinity || v === -Infinity) throw new GrpoError('GRPO_NON_FINITE', `Expected a finite reward or NaN for ${name} but received ${v}`);
  return v;
}

function weightsOf(options: RankRewardAssemblyOptions, functions: number): ArrayLike<number> {
  if (options.weights === undefined) return new Float64Array(functions).fill(1);
  check.length(`${FN} weights`, options.weights, functions, `[F] = [${functions}]`);
  for (let f = 0; f < functions; f++) check.number(`${FN} weights[${f}]`, options.weights[f], Number.isFinite, 'to be finite');
  return options.weights;
}

/** K: the longest list (at least 1, as upstream's `max_len = 1` for all-empty outputs), or `ranks`. */
function ranksOf(rows: number[][][], options: RankRewardAssemblyOptions): number {
  const longest = rows.reduce((max, fn) => fn.reduce((m, row) => Math.max(m, row.length), max), 1);
  if (options.ranks === undefined) return longest;
  const { ranks } = options;
  if (longest > ranks) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${FN} reward lists of at most ranks = ${ranks} entries but one has ${longest}`);
  }
  return ranks;
}

/**
 * Assembles the outputs of F reward functions for N completions into per-rank rewards, as Rank-GRPO does:
 * a ragged list is padded with NaN to the longest list of the batch, a None completion is all NaN, a
 * scalar function fills rank 1 only (NaN beyond), and the weighted sum over functions counts NaN as 0.
 * @example
 * const { rewards } = assembleRankRewards([[[1, 0, 1], [0]], [0.5, null]], { weights: [1, 2] });
 * // rewards [2, 3] = [2, 0, 1, 0, 0, 0]
 */
export function assembleRankRewards(outputs: readonly RewardFunctionOutput[], options?: RankRewardAssemblyOptions): AssembledRankRewards {
  const o = opt.checkOptions(RANK_REWARD_ASSEMBLY_OPTIONS, opt.kernelNaming(FN), options, {});
  if (!Array.isArray(outputs) || outputs.length === 0) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} outputs to be a non-empty array (one entry per reward function)`);
  }
  const completions = Array.isArray(outputs[0]) ? outputs[0].length : 0;
  const rows = outputs.map((output, f) => rowsOf(output, f, completions)); // [F][N][≤ K]
  const functions = outputs.length;
  const weights = weightsOf(o, functions);
  const ranks = ranksOf(rows, o);
  const perFunction = new Float32Array(completions * functions * ranks).fill(NaN); // [N, F, K]
  const rewards = new Float32Array(completions * ranks); // [N, K]
  rows.forEach((fn, f) => fn.forEach((row, i) => row.forEach((v, k) => {
    perFunction[(i * functions + f) * ranks + k] = v;
    if (!Number.isNaN(v)) rewards[i * ranks + k] += weights[f] * v;
  })));
  return { rewards, perFunction, completions, functions, ranks };
}
