/**
 * Diagnostics of the learning signal: zero-reward groups under respondent-row vs union rewards, the
 * share of rank-advantage variance due to which respondent was drawn, and CCR's informative groups.
 */
import { GrpoError } from '../errors.js';
import { extractAnswers } from '../rewards/ccr-extract.js';
import { informativeGroups } from '../rewards/ccr.js';
import {
  prepareRequest,
  RANK_REWARD_DEFAULTS,
  rankRewardsBatch,
  resolveRankOptions,
  scoreCompletion,
  type RankRewardBatchOptions,
  type RankRewardOptions,
  type RewardRequest,
} from '../rewards/recommend.js';
import * as opt from '../options/schema.js';
import { float32Array, integer, length } from '../validate.js';
import { bootstrap, BOOTSTRAP_OPTIONS, type Interval, type RequestSeries } from './bootstrap.js';

/** How often a group gives no signal at all. */
export interface ZeroRewardFractions {
  /** (request, rank) cells in which all S candidates earn 0, over all cells */
  cells: number;
  /** requests in which all S lists earn 0 at every rank, over all requests */
  requests: number;
}

/**
 * Zero-reward fractions of rewards [groups, candidates, ranks].
 * @example zeroRewardFractions(new Float32Array([0, 1, 0, 0]), 1, 2, 2) // { cells: 0.5, requests: 0 }
 */
export function zeroRewardFractions(rewards: Float32Array, groups: number, candidates: number, ranks: number): ZeroRewardFractions {
  float32Array('rewards', rewards);
  integer('groups', groups, 0);
  integer('candidates', candidates, 1);
  integer('ranks', ranks, 1);
  length('rewards', rewards, groups * candidates * ranks, `[groups=${groups}, candidates=${candidates}, ranks=${ranks}]`);
  let zeroCells = 0;
  let zeroRequests = 0;
  for (let g = 0; g < groups; g++) {
    let zeroHere = 0;
    for (let k = 0; k < ranks; k++) {
      let allZero = true;
      for (let s = 0; s < candidates && allZero; s++) allZero = rewards[(g * candidates + s) * ranks + k] === 0;
      if (allZero) zeroHere++;
    }
    zeroCells += zeroHere;
    if (zeroHere === ranks) zeroRequests++;
  }
  return { cells: groups === 0 ? NaN : zeroCells / (groups * ranks), requests: groups === 0 ? NaN : zeroRequests / groups };
}

/**
 * Zero-reward fractions of the same completions [groups][candidates] under respondent-row rewards
 * (`options.respondents`: the respondent drawn per group, default 0) and under union rewards.
 */
export function compareZeroRewards(
  completions: ReadonlyArray<readonly string[]>,
  requests: readonly RewardRequest[],
  options: Omit<RankRewardBatchOptions, 'target'> = {},
): { respondent: ZeroRewardFractions; union: ZeroRewardFractions } {
  const candidates = completions.length === 0 ? 1 : completions[0].length;
  const k = options.k ?? RANK_REWARD_DEFAULTS.k;
  const { respondents, ...rest } = options;
  const fractions = (batch: { rewards: Float32Array }) => zeroRewardFractions(batch.rewards, requests.length, candidates, k);
  return {
    respondent: fractions(rankRewardsBatch(completions, requests, { ...rest, respondents, target: 'respondent' })),
    union: fractions(rankRewardsBatch(completions, requests, { ...rest, target: 'union' })),
  };
}

/**
 * Rewards of S fixed lists against every respondent of one request: [respondents, candidates, ranks].
 * `options` as the rank rewards (`target` and `respondent` are set here).
 */
export function respondentRewards(
  completions: readonly string[],
  request: RewardRequest,
  options: Omit<RankRewardOptions, 'target' | 'respondent'> = {},
): Float32Array {
  const o = resolveRankOptions({ ...options, target: 'respondent' });
  const respondents = request.respondents?.length ?? 0;
  // rewards [respondents, candidates, ranks]
  const rewards = new Float32Array(respondents * completions.length * o.k);
  for (let r = 0; r < respondents; r++) {
    const ro = { ...o, respondent: r };
    const prepared = prepareRequest(request, ro);
    completions.forEach((text, s) => {
      const row = (r * completions.length + s) * o.k;
      scoreCompletion(text, prepared, ro, rewards.subarray(row, row + o.k), new Float32Array(o.k));
    });
  }
  return rewards;
}

/** Options of {@link respondentVarianceShare}: the rank advantages' scale, then the bootstrap's. */
export const VARIANCE_SHARE_OPTIONS = {
  scale: opt.choice(['std', 'none'] as const, 'std',
    'Rank advantages: "std" divides by the group\'s standard deviation (ddof 1) + 1e-4, as Rank-GRPO (§4.5); "none" keeps them mean-centred only.'),
  ...BOOTSTRAP_OPTIONS,
};

export type VarianceShareOptions = opt.OptionsOf<typeof VARIANCE_SHARE_OPTIONS>;

/** The share of rank-advantage variance that comes from which respondent was drawn. */
export interface VarianceShare extends Interval {
  /** Requests with at least two respondents (the others are left out). */
  requests: number;
  /** per-request within (sum) and total (count) sums of squares */
  series: RequestSeries;
}

const ADVANTAGE_EPSILON = 1e-4;

/** Rank advantages of rewards [candidates, ranks], into `out`: per rank, centred (and scaled) over candidates. */
function rankAdvantages(rewards: Float32Array, candidates: number, ranks: number, scale: 'std' | 'none', out: Float64Array): void {
  for (let k = 0; k < ranks; k++) {
    let mean = 0;
    for (let s = 0; s < candidates; s++) mean += rewards[s * ranks + k] / candidates;
    let squares = 0;
    for (let s = 0; s < candidates; s++) squares += (rewards[s * ranks + k] - mean) ** 2;
    const divisor = scale === 'std' ? Math.sqrt(squares / Math.max(candidates - 1, 1)) + ADVANTAGE_EPSILON : 1;
    for (let s = 0; s < candidates; s++) out[s * ranks + k] = (rewards[s * ranks + k] - mean) / divisor;
  }
}

/** [within, total] sums of squares of the advantages [respondents, cells] of one request. */
function sumsOfSquares(advantages: Float64Array, respondents: number, cells: number): [number, number] {
  let grand = 0;
  for (const a of advantages) grand += a / advantages.length;
  let within = 0;
  let total = 0;
  for (let c = 0; c < cells; c++) {
    let mean = 0;
    for (let r = 0; r < respondents; r++) mean += advantages[r * cells + c] / respondents;
    for (let r = 0; r < respondents; r++) {
      within += (advantages[r * cells + c] - mean) ** 2;
      total += (advantages[r * cells + c] - grand) ** 2;
    }
  }
  return [within, total];
}

/**
 * Law of total variance over (list, rank, respondent) within each request: share = Σ E_{s,k}[Var_r(A)]
 * / Σ Var(A), pooled over requests (sums of squares), with a percentile bootstrap over requests.
 * 1: the advantage of a list depends only on which respondent was drawn; 0: all respondents agree.
 * @param rewards - per request, rewards [respondents, candidates, ranks] (e.g. {@link respondentRewards})
 */
export function respondentVarianceShare(
  rewards: readonly Float32Array[],
  candidates: number,
  ranks: number,
  options: VarianceShareOptions = {},
): VarianceShare {
  const { scale, ...bootstrapOptions } = opt.checkOptions(VARIANCE_SHARE_OPTIONS, opt.plainNaming('variance share options'), options,
    opt.defaultsOf(VARIANCE_SHARE_OPTIONS));
  integer('candidates', candidates, 2);
  integer('ranks', ranks, 1);
  const cells = candidates * ranks;
  const several = rewards.filter((r, i) => {
    float32Array(`rewards[${i}]`, r);
    if (r.length % cells !== 0) {
      const expected = `[respondents, ${candidates}, ${ranks}]`;
      throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected rewards[${i}] of shape ${expected} but received ${r.length} values`);
    }
    return r.length >= 2 * cells;
  });
  const series = { sum: new Float64Array(several.length), count: new Float64Array(several.length) };
  several.forEach((request, i) => {
    const respondents = request.length / cells;
    // advantages [respondents, candidates, ranks]
    const advantages = new Float64Array(request.length);
    for (let r = 0; r < respondents; r++) {
      const [start, end] = [r * cells, (r + 1) * cells];
      rankAdvantages(request.subarray(start, end), candidates, ranks, scale, advantages.subarray(start, end));
    }
    [series.sum[i], series.count[i]] = sumsOfSquares(advantages, respondents, cells);
  });
  const [interval] = bootstrap([series], bootstrapOptions);
  return { ...interval, requests: several.length, series };
}

/** CCR: observed and predicted fractions of informative groups. */
export interface CcrSignal {
  /** Groups whose candidates' correct counts are not all equal. */
  informative: number;
  /** 1 − Σ_c p_c^S, p_c the empirical distribution of correct counts over all candidates (independent draws). */
  predicted: number;
  /** distribution [maxCount + 1]: p_c */
  distribution: number[];
}

/**
 * Observed informative-group fraction and the one predicted if candidates drew their correct counts
 * independently from the pooled distribution (prompts of mixed difficulty make the observed lower).
 * @param correctCounts - [groups × groupSize], candidate-major within each group
 */
export function ccrSignal(correctCounts: ArrayLike<number>, groupSize: number): CcrSignal {
  const { fraction } = informativeGroups(correctCounts, groupSize);
  const counts: number[] = [];
  for (let i = 0; i < correctCounts.length; i++) {
    const c = integer(`correctCounts[${i}]`, correctCounts[i], 0, 1000);
    counts[c] = (counts[c] ?? 0) + 1;
  }
  const distribution = Array.from(counts, (n) => (n ?? 0) / correctCounts.length);
  const same = distribution.reduce((sum, p) => sum + p ** groupSize, 0);
  return { informative: fraction, predicted: correctCounts.length === 0 ? NaN : 1 - same, distribution };
}

/** How many answers completions finished (a complete `Answer k: \boxed{…}`) before the cap. */
export interface AnswersCompleted {
  /** histogram [N + 1]: completions with 0, 1, …, N complete answers */
  histogram: number[];
  mean: number;
  completions: number;
}

/**
 * Distribution of the number of complete answers per completion (any verdict), over completions whose
 * `truncated` flag is set when flags are given (those that hit the cap), else over all.
 */
export function answersCompleted(completions: readonly string[], n: number, truncated?: ArrayLike<boolean | number>): AnswersCompleted {
  integer('n', n, 1, 100);
  if (truncated !== undefined) length('truncated', truncated, completions.length, '[completions]');
  const histogram = new Array<number>(n + 1).fill(0);
  let total = 0;
  let counted = 0;
  completions.forEach((text, i) => {
    if (truncated !== undefined && !truncated[i]) return;
    if (typeof text !== 'string') throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected completions[${i}] to be a string but received ${typeof text}`);
    const complete = extractAnswers(text, n).filter((answer) => answer.boxEnd >= 0).length;
    histogram[complete]++;
    total += complete;
    counted++;
  });
  return { histogram, mean: counted === 0 ? NaN : total / counted, completions: counted };
}

/** The distribution [N + 1] of the number of successes of independent Bernoulli trials with the given rates (Poisson-binomial). */
export function countDistribution(rates: ArrayLike<number>): Float64Array {
  let p = Float64Array.of(1);
  for (let k = 0; k < rates.length; k++) {
    const next = new Float64Array(p.length + 1);
    p.forEach((mass, c) => {
      next[c] += mass * (1 - rates[k]);
      next[c + 1] += mass * rates[k];
    });
    p = next;
  }
  return p;
}

/**
 * Predicted informative-group fraction from per-prompt correct rates: for each group, q_k = the share of
 * its S candidates that answered problem k correctly, p_c = the count distribution those rates give when
 * a completion's answers are independent ({@link countDistribution}), and 1 − Σ_c p_c^S the chance that
 * S independent candidates do not all get the same count; the mean over groups. For N = 1 this is the
 * plug-in 1 − q^S − (1 − q)^S, which lies below the observed fraction at small S (a group with q in
 * {0, 1} predicts 0; one with 0 < q < 1 is informative and predicts less than 1).
 * @param correct - [groups, S, N]: 1 where candidate s answered problem k correctly
 */
export function predictedInformative(correct: ArrayLike<number>, groups: number, candidates: number, problems: number): number {
  integer('groups', groups, 0);
  integer('candidates', candidates, 1);
  integer('problems', problems, 1, 100);
  length('correct', correct, groups * candidates * problems, `[groups=${groups}, candidates=${candidates}, problems=${problems}]`);
  let sum = 0;
  for (let g = 0; g < groups; g++) {
    const rates = new Float64Array(problems);
    for (let s = 0; s < candidates; s++) {
      for (let k = 0; k < problems; k++) rates[k] += correct[(g * candidates + s) * problems + k] ? 1 / candidates : 0;
    }
    sum += 1 - countDistribution(rates).reduce((same, p) => same + p ** candidates, 0);
  }
  return groups === 0 ? NaN : sum / groups;
}
