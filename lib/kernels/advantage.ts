// Advantages: group-normalised outcome rewards (TRL / verl / OpenRLHF), rank-wise advantages
// (Rank-GRPO, ReMaRk) and their placement on tokens. Native kernels: native/kernels/advantage*.cc.
import { kernelBinding, type CudaBinding, type Device, type NativeAdvantageOptions } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import * as check from '../validate.js';
import { rejectOnThrow, runNative } from './native-call.js';

/** How rewards are normalised inside a group. Every option names what it reproduces. */
export interface NormalizeOptions {
  /**
   * `"group"`: (r − group mean) / (group std + ε) (TRL `"group"`, verl `norm_adv_by_std_in_grpo`);
   * `"batch"`: group mean, std of the whole batch (TRL `"batch"`); `"none"`: r − group mean (Dr. GRPO).
   * @defaultValue "group"
   */
  scale?: 'group' | 'batch' | 'none';
  /** Added to the std (not the variance): TRL / Rank-GRPO 1e-4, verl 1e-6, OpenRLHF 1e-9. @defaultValue 1e-4 */
  stdEpsilon?: number;
  /**
   * A group with fewer than two scorable rewards: `"zero"` gives A = 0 (TRL), `"raw"` uses mean 0 and
   * std 1 (verl), `"nan"` gives NaN (torch.std of one value: Rank-GRPO, OpenRLHF). @defaultValue "zero"
   */
  singletonGroup?: 'zero' | 'raw' | 'nan';
  /** NaN rewards: `"exclude"` from the statistics with A = 0 (TRL HEAD), or `"asZero"` (TRL ≤ 0.21, Rank-GRPO). @defaultValue "exclude" */
  nanRewards?: 'exclude' | 'asZero';
  /** Where to run: 'cpu', 'cuda' (GRPO_CUDA_UNAVAILABLE without a usable GPU) or 'auto' (CUDA when available). @defaultValue 'cpu' */
  device?: Device;
}

/** Options of {@link groupAdvantages}. */
export interface GroupAdvantageOptions extends NormalizeOptions {
  /** Rows per group, contiguous (TRL `view(-1, G)`); ignored when `groupIds` is given. @defaultValue 8 */
  groupSize?: number;
  /** Group id per row [B] in [0, number of groups) (verl `uid`): any order, any group sizes. @defaultValue none */
  groupIds?: Int32Array;
  /** R: rewards is [B, R] with one column per reward function. @defaultValue 1 */
  objectives?: number;
  /** Weight per reward function [R] (TRL `reward_weights`), also with one function. @defaultValue all 1 */
  rewardWeights?: ArrayLike<number>;
  /**
   * `"sumThenNormalize"`: weighted nansum, then normalise (TRL default); `"normalizeThenSum"`: normalise each
   * function per group, weighted nansum, then always normalise over the batch (TRL GDPO; `scale` is not used).
   * Either way a row whose rewards are all NaN is unscorable: it leaves every statistic and gets A = 0, and
   * the stats' `rewardMean` / `rewardStd` are those of the weighted raw sum. @defaultValue "sumThenNormalize"
   */
  multiObjective?: 'sumThenNormalize' | 'normalizeThenSum';
}

/** Options of {@link rankAdvantages}: rewards [G, S, K]. */
export interface RankAdvantageOptions extends NormalizeOptions {
  /** S, the candidates (completions) per group. */
  candidates: number;
  /** K, the rank positions per candidate. */
  ranks: number;
}

/** Statistics of {@link groupAdvantages}, named as TRL logs them. */
export interface AdvantageStats {
  /** Mean of the weighted sum of the raw rewards over the scorable rows (TRL `reward`). */
  rewardMean: number;
  /** Unbiased std of the same weighted sum over the whole batch (TRL HEAD `reward_std`). */
  rewardStd: number;
  /**
   * Fraction of samples whose scaling std is ≈ 0 (TRL `frac_reward_zero_std`; global std in `"batch"` mode);
   * as TRL sets it, the std of a one-row group (`num_generations_eval = 1`) is 0.
   */
  fracRewardZeroStd: number;
}

/** Statistics of {@link rankAdvantages}. */
export interface RankAdvantageStats extends AdvantageStats {
  /** Fraction of (group, rank) cells whose rewards are all equal (zero advantage there). */
  fracCellsEqual: number;
  /** Fraction of (group, rank) cells whose rewards are all 0. */
  fracCellsZero: number;
}

export interface AdvantageResult<S> {
  /** Same shape as the rewards (one column for multi-objective rewards: [B]). */
  advantages: Float32Array;
  stats: S;
}

/** The defaults: TRL HEAD behaviour. */
export const ADVANTAGE_DEFAULTS = Object.freeze({
  scale: 'group',
  stdEpsilon: 1e-4,
  singletonGroup: 'zero',
  nanRewards: 'exclude',
  groupSize: 8,
  objectives: 1,
  multiObjective: 'sumThenNormalize',
} as const);

const NORMALIZE_KEYS = ['scale', 'stdEpsilon', 'singletonGroup', 'nanRewards', 'device'] as const;
const GROUP_KEYS = [...NORMALIZE_KEYS, 'groupSize', 'groupIds', 'objectives', 'rewardWeights', 'multiObjective'] as const;
const RANK_KEYS = [...NORMALIZE_KEYS, 'candidates', 'ranks'] as const;
const SCALES = ['group', 'batch', 'none'] as const;
const SINGLETONS = ['zero', 'raw', 'nan'] as const;
const NAN_POLICIES = ['exclude', 'asZero'] as const;

/** The normalisation options as native/addon/advantage_addon.cc reads them (by field name). */
function nativeNormalize(fn: string, o: NormalizeOptions): NativeAdvantageOptions {
  const scale = check.oneOf(`${fn} scale`, o.scale ?? ADVANTAGE_DEFAULTS.scale, SCALES);
  const singleton = check.oneOf(`${fn} singletonGroup`, o.singletonGroup ?? ADVANTAGE_DEFAULTS.singletonGroup, SINGLETONS);
  const nan = check.oneOf(`${fn} nanRewards`, o.nanRewards ?? ADVANTAGE_DEFAULTS.nanRewards, NAN_POLICIES);
  const eps = check.number(`${fn} stdEpsilon`, o.stdEpsilon ?? ADVANTAGE_DEFAULTS.stdEpsilon,
    (e) => e >= 0 && Number.isFinite(e), 'to be finite and >= 0');
  return { scale, singletonGroup: singleton, nanRewards: nan, stdEpsilon: eps };
}

interface Grouping {
  groupSize: number;
  groupIds: Int32Array | null;
  numGroups: number;
}

function grouping(fn: string, rows: number, o: GroupAdvantageOptions): Grouping {
  if (o.groupIds === undefined) {
    const groupSize = check.integer(`${fn} groupSize`, o.groupSize ?? ADVANTAGE_DEFAULTS.groupSize, 1);
    if (rows % groupSize !== 0) {
      throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${fn} rewards rows (${rows}) to be a multiple of groupSize ${groupSize}`);
    }
    return { groupSize, groupIds: null, numGroups: rows / groupSize };
  }
  const ids = check.int32Array(`${fn} groupIds`, o.groupIds);
  check.length(`${fn} groupIds`, ids, rows, `[B] = [${rows}]`);
  let numGroups = 1;
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] < 0) throw new GrpoError('GRPO_INDEX_RANGE', `Expected ${fn} groupIds[${i}] >= 0 but received ${ids[i]}`);
    numGroups = Math.max(numGroups, ids[i] + 1);
  }
  return { groupSize: 1, groupIds: ids, numGroups };
}

type GroupBackend = Pick<CudaBinding, 'groupAdvantages'>;

function callGroups(async: boolean, rewards: Float32Array, g: Grouping, normalize: NativeAdvantageOptions, backend: GroupBackend) {
  const advantages = new Float32Array(rewards.length); // [B]
  return runNative(async,
    (a) => backend.groupAdvantages(rewards, g.groupSize, g.groupIds, g.numGroups, normalize, advantages, a),
    (stats): AdvantageResult<AdvantageStats> => ({ advantages, stats }));
}

/** Column f of rewards [B, R]. */
function column(rewards: Float32Array, objectives: number, f: number): Float32Array {
  const out = new Float32Array(rewards.length / objectives); // [B]
  for (let i = 0; i < out.length; i++) out[i] = rewards[i * objectives + f];
  return out;
}

/** Σ_f w_f·x[i,f] skipping NaN (torch nansum, in float32); NaN on the rows where `unscorable` is set. */
function weightedNanSum(columns: Float32Array[], weights: ArrayLike<number>, unscorable: Uint8Array): Float32Array {
  const sum = new Float32Array(unscorable.length); // [B]
  columns.forEach((c, f) => {
    for (let i = 0; i < c.length; i++) if (c[i] === c[i]) sum[i] += weights[f] * c[i];
  });
  for (let i = 0; i < sum.length; i++) if (unscorable[i]) sum[i] = NaN;
  return sum;
}

/** w·r for one reward function: an unscorable (NaN) reward stays NaN. */
function scaled(rewards: Float32Array, weight: number): Float32Array {
  if (weight === 1) return rewards;
  const out = new Float32Array(rewards.length); // [B]
  for (let i = 0; i < out.length; i++) out[i] = weight * rewards[i];
  return out;
}

/** [B] 1 where every reward function returned None (NaN): TRL's `unscorable_mask`. */
function unscorableRows(columns: Float32Array[]): Uint8Array {
  const unscorable = new Uint8Array(columns[0].length).fill(1); // [B]
  for (const c of columns) for (let i = 0; i < c.length; i++) if (c[i] === c[i]) unscorable[i] = 0;
  return unscorable;
}

function weightsOf(fn: string, o: GroupAdvantageOptions, objectives: number): ArrayLike<number> {
  if (o.rewardWeights === undefined) return new Float64Array(objectives).fill(1);
  const w = o.rewardWeights;
  check.length(`${fn} rewardWeights`, w, objectives, `[R] = [${objectives}]`);
  for (let f = 0; f < objectives; f++) check.number(`${fn} rewardWeights[${f}]`, w[f], Number.isFinite, 'to be finite');
  return w;
}

type GroupResult = AdvantageResult<AdvantageStats> | Promise<AdvantageResult<AdvantageStats>>;

/**
 * GDPO (TRL `normalize_then_sum`, grpo_trainer.py L2710-2720): per-function group z-scores (scale "group"),
 * their weighted nansum (NaN on unscorable rows, which then leave the batch statistics), then one
 * batch-wide normalisation. `reward` / `reward_std` stay those of the weighted raw sum (`logged`).
 */
function normalizeThenSum(async: boolean, columns: Float32Array[], weights: ArrayLike<number>, unscorable: Uint8Array,
  g: Grouping, normalize: NativeAdvantageOptions, backend: GroupBackend, logged: AdvantageStats): GroupResult {
  const perFunction: NativeAdvantageOptions = { ...normalize, scale: 'group' };
  const z = columns.map((c) => (callGroups(false, c, g, perFunction, backend) as AdvantageResult<AdvantageStats>).advantages);
  const summed = weightedNanSum(z, weights, unscorable);
  const whole: Grouping = { groupSize: summed.length || 1, groupIds: null, numGroups: 1 };
  const withLoggedStats = (r: AdvantageResult<AdvantageStats>) =>
    ({ advantages: r.advantages, stats: { ...logged, fracRewardZeroStd: r.stats.fracRewardZeroStd } });
  const batch = callGroups(async, summed, whole, perFunction, backend);
  return batch instanceof Promise ? batch.then(withLoggedStats) : withLoggedStats(batch);
}

function group(async: boolean, rewards: unknown, options: GroupAdvantageOptions | undefined): GroupResult {
  const fn = 'groupAdvantages';
  check.knownKeys(fn, options, GROUP_KEYS);
  const o = options ?? {};
  const r = check.float32Array(`${fn} rewards`, rewards); // ±Infinity is rejected natively, NaN is unscorable
  const objectives = check.integer(`${fn} objectives`, o.objectives ?? ADVANTAGE_DEFAULTS.objectives, 1);
  if (r.length % objectives !== 0) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${fn} rewards of shape [B, R] with R = ${objectives} but received ${r.length} elements`);
  }
  const normalize = nativeNormalize(fn, o);
  const g = grouping(fn, r.length / objectives, o);
  const backend = kernelBinding(fn, o.device, 'groupAdvantages');
  const weights = weightsOf(fn, o, objectives);
  const mode = check.oneOf(`${fn} multiObjective`, o.multiObjective ?? ADVANTAGE_DEFAULTS.multiObjective,
    ['sumThenNormalize', 'normalizeThenSum'] as const);
  if (objectives === 1 && mode === 'sumThenNormalize') return callGroups(async, scaled(r, weights[0]), g, normalize, backend);
  const columns = Array.from({ length: objectives }, (_, f) => column(r, objectives, f));
  const unscorable = unscorableRows(columns);
  const weightedSum = weightedNanSum(columns, weights, unscorable); // [B]
  if (mode === 'sumThenNormalize') return callGroups(async, weightedSum, g, normalize, backend);
  const logged = (callGroups(false, weightedSum, g, normalize, backend) as AdvantageResult<AdvantageStats>).stats;
  return normalizeThenSum(async, columns, weights, unscorable, g, normalize, backend, logged);
}

/**
 * Group-normalised advantages of outcome rewards. `rewards` is [B] (or [B, R] with `objectives: R`).
 * Masking a completion out of the loss never belongs here: every reward enters its group's statistics.
 * @example
 * const { advantages } = groupAdvantagesSync(new Float32Array([1, 0, 0, 1]), { groupSize: 4 });
 */
export function groupAdvantages(rewards: Float32Array, options?: GroupAdvantageOptions): Promise<AdvantageResult<AdvantageStats>> {
  return rejectOnThrow(() => group(true, rewards, options) as Promise<AdvantageResult<AdvantageStats>>);
}

/** Synchronous {@link groupAdvantages}. */
export function groupAdvantagesSync(rewards: Float32Array, options?: GroupAdvantageOptions): AdvantageResult<AdvantageStats> {
  return group(false, rewards, options) as AdvantageResult<AdvantageStats>;
}

function rank(async: boolean, rewards: unknown, options: RankAdvantageOptions) {
  const fn = 'rankAdvantages';
  check.knownKeys(fn, options, RANK_KEYS);
  if (options === undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${fn} options with candidates and ranks but received undefined`);
  const r = check.float32Array(`${fn} rewards`, rewards); // ±Infinity is rejected natively, NaN is unscorable
  const candidates = check.integer(`${fn} candidates`, options.candidates, 1);
  const ranks = check.integer(`${fn} ranks`, options.ranks, 1);
  if (r.length % (candidates * ranks) !== 0) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH',
      `Expected ${fn} rewards of shape [G, S, K] with S = ${candidates}, K = ${ranks}, but ${r.length} elements is not a multiple of ${candidates * ranks}`);
  }
  const normalize = nativeNormalize(fn, options);
  const advantages = new Float32Array(r.length); // [G, S, K]
  const backend = kernelBinding(fn, options.device, 'rankAdvantages');
  return runNative(async,
    (a) => backend.rankAdvantages(r, r.length / (candidates * ranks), candidates, ranks, normalize, advantages, a),
    (stats): AdvantageResult<RankAdvantageStats> => ({ advantages, stats }));
}

/**
 * Rank-wise advantages (Rank-GRPO, ReMaRk): rewards [G, S, K] are normalised per (group, rank) across
 * the S candidates. A rank a candidate never reached must hold reward 0 (as upstream pads it).
 */
export function rankAdvantages(rewards: Float32Array, options: RankAdvantageOptions): Promise<AdvantageResult<RankAdvantageStats>> {
  return rejectOnThrow(() => rank(true, rewards, options) as Promise<AdvantageResult<RankAdvantageStats>>);
}

/** Synchronous {@link rankAdvantages}. */
export function rankAdvantagesSync(rewards: Float32Array, options: RankAdvantageOptions): AdvantageResult<RankAdvantageStats> {
  return rank(false, rewards, options) as AdvantageResult<RankAdvantageStats>;
}
