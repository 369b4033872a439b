// Advantages: group-normalised outcome rewards (TRL / verl / OpenRLHF), rank-wise advantages
// (Rank-GRPO, ReMaRk) and their placement on tokens. Native kernels: native/kernels/advantage/advantage*.cc.
import { kernelBinding, type CudaBinding, type NativeAdvantageOptions } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import * as check from '../validate.js';
import {
  ADVANTAGE_DEFAULTS, GROUP_ADVANTAGE_OPTIONS, NORMALIZE_OPTIONS, RANK_ADVANTAGE_OPTIONS,
  type GroupAdvantageOptions, type RankAdvantageOptions,
} from '../options/advantages.js';
import { defaultsOf, kernelNaming, type ValuesOf, checkOptions } from '../options/schema.js';
import { rejectOnThrow, runNative } from './native-call.js';

export {
  ADVANTAGE_DEFAULTS, GROUP_ADVANTAGE_OPTIONS, NORMALIZE_OPTIONS, RANK_ADVANTAGE_OPTIONS,
  type GroupAdvantageOptions, type NormalizeOptions, type RankAdvantageOptions,
} from '../options/advantages.js';

type ResolvedGroupOptions = ValuesOf<typeof GROUP_ADVANTAGE_OPTIONS>;
const RANK_DEFAULTS = defaultsOf(RANK_ADVANTAGE_OPTIONS);

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

/** {@link GroupAdvantageOptions} plus where the advantages go (not part of a preset or a trainer's config). */
export interface GroupAdvantageCallOptions extends GroupAdvantageOptions {
  /**
   * [B] a caller's buffer for `advantages`, reused across calls: every element is overwritten. It must share no
   * memory with `rewards` or `groupIds`. An async call writes it when the call settles, never while it runs.
   * @defaultValue a new Float32Array per call
   */
  out?: Float32Array;
}

export interface AdvantageResult<S> {
  /** Same shape as the rewards (one column for multi-objective rewards: [B]); the `out` buffer when one was given. */
  advantages: Float32Array;
  stats: S;
}

/** The normalisation options as native/addon/advantage_addon.cc reads them (by field name). */
function nativeNormalize(o: ValuesOf<typeof NORMALIZE_OPTIONS>): NativeAdvantageOptions {
  return { scale: o.scale, singletonGroup: o.singletonGroup, nanRewards: o.nanRewards, stdEpsilon: o.stdEpsilon };
}

interface Grouping {
  groupSize: number;
  groupIds: Int32Array | null;
  numGroups: number;
}

function grouping(fn: string, rows: number, o: ResolvedGroupOptions): Grouping {
  if (o.groupIds === undefined) {
    const { groupSize } = o;
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

function callGroups(async: boolean, rewards: Float32Array, g: Grouping, normalize: NativeAdvantageOptions, backend: GroupBackend,
  out?: Float32Array) {
  const advantages = out ?? new Float32Array(rewards.length); // [B]
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

function weightsOf(fn: string, o: ResolvedGroupOptions, objectives: number): ArrayLike<number> {
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
  g: Grouping, normalize: NativeAdvantageOptions, backend: GroupBackend, logged: AdvantageStats, out?: Float32Array): GroupResult {
  const perFunction: NativeAdvantageOptions = { ...normalize, scale: 'group' };
  const z = columns.map((c) => (callGroups(false, c, g, perFunction, backend) as AdvantageResult<AdvantageStats>).advantages);
  const summed = weightedNanSum(z, weights, unscorable);
  const whole: Grouping = { groupSize: summed.length || 1, groupIds: null, numGroups: 1 };
  const withLoggedStats = (r: AdvantageResult<AdvantageStats>) =>
    ({ advantages: r.advantages, stats: { ...logged, fracRewardZeroStd: r.stats.fracRewardZeroStd } });
  const batch = callGroups(async, summed, whole, perFunction, backend, out);
  return batch instanceof Promise ? batch.then(withLoggedStats) : withLoggedStats(batch);
}

const GROUP_FN = 'groupAdvantages';
const GROUP_NAMING = kernelNaming(GROUP_FN);

/** Separates `out` from the advantage options; anything that is not an options object is left to their validation. */
function splitOut(options: GroupAdvantageCallOptions | undefined): { out?: unknown; rest?: GroupAdvantageOptions } {
  if (typeof options !== 'object' || options === null) return { rest: options };
  const { out, ...rest } = options;
  return { out, rest };
}

/** The caller's [B] advantages buffer, checked; undefined without one. */
function advantagesBuffer(out: unknown, rows: number, rewards: Float32Array, groupIds: Int32Array | null): Float32Array | undefined {
  if (out === undefined) return undefined;
  return check.outputBuffer(`${GROUP_FN} out`, out, rows, `[B] = [${rows}]`, { rewards, groupIds });
}

function group(async: boolean, rewards: unknown, options: GroupAdvantageCallOptions | undefined): GroupResult {
  const fn = GROUP_FN;
  const { out: given, rest } = splitOut(options);
  const o = checkOptions(GROUP_ADVANTAGE_OPTIONS, GROUP_NAMING, rest, ADVANTAGE_DEFAULTS);
  const r = check.float32Array(`${fn} rewards`, rewards); // ±Infinity is rejected natively, NaN is unscorable
  const { objectives, multiObjective: mode } = o;
  if (r.length % objectives !== 0) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${fn} rewards of shape [B, R] with R = ${objectives} but received ${r.length} elements`);
  }
  const normalize = nativeNormalize(o);
  const g = grouping(fn, r.length / objectives, o);
  const out = advantagesBuffer(given, r.length / objectives, r, g.groupIds);
  const backend = kernelBinding(fn, o.device, 'groupAdvantages');
  const weights = weightsOf(fn, o, objectives);
  if (objectives === 1 && mode === 'sumThenNormalize') return callGroups(async, scaled(r, weights[0]), g, normalize, backend, out);
  const columns = Array.from({ length: objectives }, (_, f) => column(r, objectives, f));
  const unscorable = unscorableRows(columns);
  const weightedSum = weightedNanSum(columns, weights, unscorable); // [B]
  if (mode === 'sumThenNormalize') return callGroups(async, weightedSum, g, normalize, backend, out);
  const logged = (callGroups(false, weightedSum, g, normalize, backend) as AdvantageResult<AdvantageStats>).stats;
  return normalizeThenSum(async, columns, weights, unscorable, g, normalize, backend, logged, out);
}

/**
 * Group-normalised advantages of outcome rewards. `rewards` is [B] (or [B, R] with `objectives: R`).
 * Masking a completion out of the loss never belongs here: every reward enters its group's statistics.
 * @example
 * const { advantages } = groupAdvantagesSync(new Float32Array([1, 0, 0, 1]), { groupSize: 4 });
 */
export function groupAdvantages(rewards: Float32Array, options?: GroupAdvantageCallOptions): Promise<AdvantageResult<AdvantageStats>> {
  return rejectOnThrow(() => group(true, rewards, options) as Promise<AdvantageResult<AdvantageStats>>);
}

/** Synchronous {@link groupAdvantages}. */
export function groupAdvantagesSync(rewards: Float32Array, options?: GroupAdvantageCallOptions): AdvantageResult<AdvantageStats> {
  return group(false, rewards, options) as AdvantageResult<AdvantageStats>;
}

function rank(async: boolean, rewards: unknown, options: RankAdvantageOptions) {
  const fn = 'rankAdvantages';
  if (options === undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${fn} options with candidates and ranks but received undefined`);
  const o = checkOptions(RANK_ADVANTAGE_OPTIONS, kernelNaming(fn), options, RANK_DEFAULTS);
  const r = check.float32Array(`${fn} rewards`, rewards); // ±Infinity is rejected natively, NaN is unscorable
  const { candidates, ranks } = o;
  if (r.length % (candidates * ranks) !== 0) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH',
      `Expected ${fn} rewards of shape [G, S, K] with S = ${candidates}, K = ${ranks}, but ${r.length} elements is not a multiple of ${candidates * ranks}`);
  }
  const normalize = nativeNormalize(o);
  const advantages = new Float32Array(r.length); // [G, S, K]
  const backend = kernelBinding(fn, o.device, 'rankAdvantages');
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
