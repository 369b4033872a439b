// The clipped GRPO policy loss family with its analytic backward (dL/dlogp), reproducing TRL,
// verl, OpenRLHF and Rank-GRPO. Native kernel: native/kernels/loss*.cc. Presets: ./presets.ts.
import { kernelBinding, type Device, type NativeLossOptions } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import * as check from '../validate.js';
import { rejectOnThrow, runNative } from './native-call.js';

export type LossType = 'clip' | 'cispoCap' | 'cispoClamp' | 'sapo' | 'vespo' | 'gpg' | 'geoMean' | 'none';
export type IsLevel = 'token' | 'sequence' | 'sequenceToken' | 'item';
export type KlEstimator = 'k1' | 'abs' | 'k2' | 'k3';
export type KlClamp = 'none' | 'verl' | 'openrlhf';
export type Aggregation =
  | 'globalTokenMean' | 'localTokenMean' | 'seqMeanTokenMean' | 'seqMeanTokenSum' | 'tokenSumOverBL' | 'tokenSumOverL'
  | 'allPositionsLengthWeighted';

/** Inputs of {@link policyLoss}; every [B, T] array is row-major. */
export interface PolicyLossInput {
  /** [B, T]: rows (sequences) and columns (token positions) of every [B, T] array. */
  shape: readonly [number, number];
  /** [B, T] current-policy log-probs (the gradient is taken with respect to these). */
  logp: Float32Array;
  /** [B, T] behaviour-policy log-probs; absent = on-policy (old = sg(logp), ratio exactly 1). */
  oldLogp?: Float32Array;
  /** [B, T] reference log-probs, needed when `beta` > 0. */
  refLogp?: Float32Array;
  /** [B, T] per-token or [B] per-sequence advantages. */
  advantages: Float32Array;
  /**
   * [B, T] 0/1 loss mask; masked-out tokens get a zero gradient and their values are never read (except under
   * `aggregation: "allPositionsLengthWeighted"`, which reads padding's logp, old, ref and advantages as TRL luspo does).
   */
  mask: Uint8Array;
  /** [B, T] item index per token (−1 none) for `isLevel: "item"`. */
  segments?: Int32Array;
  /** [B, T] token entropies: reported as `stats.entropy`, needed for `topEntropyQuantile` < 1. */
  entropy?: Float32Array;
}

/** The four choices (surrogate, IS level, KL, aggregation) as separate fields. See docs/advantages-and-loss.md. */
export interface PolicyLossOptions {
  /**
   * `"clip"` (TRL grpo/bnpo/dr_grpo/dapo/luspo, verl vanilla/gspo), `"cispoCap"` (TRL cispo: sg(min(r, cap))·A·logp),
   * `"cispoClamp"` (verl cispo), `"sapo"`, `"vespo"` (TRL), `"gpg"` (verl), `"geoMean"` (verl GMPO: row mean,
   * ignores `isLevel` and `aggregation` for its policy term, which is a mean over `sequenceCount` rows), `"none"` (no
   * policy term: the KL term alone, see klLoss). @defaultValue "clip"
   */
  lossType?: LossType;
  /** `"token"`, `"sequence"` (TRL GSPO), `"sequenceToken"` (verl gspo), `"item"` (Rank-GRPO, needs segments). @defaultValue "token" */
  isLevel?: IsLevel;
  /** Lower clip range: r ≥ 1 − epsilonLow (TRL `epsilon`, verl `clip_ratio_low`). @defaultValue 0.2 */
  epsilonLow?: number;
  /** Upper clip range: r ≤ 1 + epsilonHigh; null = epsilonLow (TRL `epsilon_high`). @defaultValue null */
  epsilonHigh?: number | null;
  /** TRL `delta` (INTELLECT-2): r := min(r, delta) in the unclipped branch; null = off. @defaultValue null */
  delta?: number | null;
  /** verl `clip_ratio_c` dual clip: for A < 0 the loss is at most −A·c; null = off. @defaultValue null */
  dualClipC?: number | null;
  /** Clamp of the log-ratio before exp (verl/OpenRLHF 20, verl gspo 10); null = none (TRL). @defaultValue null */
  logRatioClamp?: number | null;
  /** `"cispoCap"`: the absolute ratio cap (TRL `epsilon_high` with loss_type cispo). @defaultValue 5 */
  cispoCap?: number;
  /** SAPO temperature for A > 0. @defaultValue 1 */
  sapoTauPos?: number;
  /** SAPO temperature for A ≤ 0. @defaultValue 1.05 */
  sapoTauNeg?: number;
  /** VESPO (k, λ) for A ≥ 0 and A < 0 (TRL vespo_k_pos / lambda_pos / k_neg / lambda_neg). @defaultValue { kPos: 2, lambdaPos: 3, kNeg: 3, lambdaNeg: 2 } */
  vespo?: { kPos: number; lambdaPos: number; kNeg: number; lambdaNeg: number };
  /** K at the item level: segments ≥ K share one overflow ratio. @defaultValue the largest segment + 1 */
  numItems?: number | null;
  /** KL coefficient β (TRL `beta`, verl `kl_loss_coef`); 0 = no KL term. @defaultValue 0 */
  beta?: number;
  /** KL estimator of logp against refLogp. @defaultValue "k3" */
  klEstimator?: KlEstimator;
  /** `"none"` (TRL), `"verl"` (k3: log-ratio ±20, value ±10), `"openrlhf"` (every value ±10). @defaultValue "none" */
  klClamp?: KlClamp;
  /** TRL `use_bias_correction_kl`: KL × ratio (in the loss and in the logged `stats.kl`). @defaultValue false */
  klBiasCorrection?: boolean;
  /**
   * verl's straight-through estimators (`kl_loss_type` "k1+", "k3+", "low_var_kl+"): the value of `klEstimator`, the
   * gradient of k2, ½(logp − ref)², i.e. logp − ref. @defaultValue false
   */
  klK2Gradient?: boolean;
  /**
   * `"globalTokenMean"` Σℓ/tokenCount (TRL dapo/cispo/vespo), `"localTokenMean"` Σℓ/Σmask (TRL bnpo, verl legacy
   * token-mean), `"seqMeanTokenMean"` (TRL grpo/sapo), `"seqMeanTokenSum"` (verl; TRL luspo), `"tokenSumOverBL"`
   * Σℓ/(B·maxCompletionLength) (TRL dr_grpo), `"tokenSumOverL"` Σℓ/lossScaleFactor (verl seq-mean-token-sum-norm),
   * `"allPositionsLengthWeighted"` Σ over all B·T positions, padding included, of ℓ·n_i / (B·T) (TRL luspo's
   * `(per_token_loss * mask.sum(1)).mean()` with a [B, T] per-token loss: token level, or sequence level with β > 0;
   * padding's own logp, old, ref and advantages are read, must be finite and get a gradient; not at the item level).
   * @defaultValue "globalTokenMean"
   */
  aggregation?: Aggregation;
  /** Global token count of `"globalTokenMean"` (TRL num_items_in_batch / num_processes); null = Σ mask of this call. @defaultValue null */
  tokenCount?: number | null;
  /** Sequences in the mean (and B of tokenSumOverBL); null = B of this call (verl: the non-empty ones). @defaultValue null */
  sequenceCount?: number | null;
  /** L_max of `"tokenSumOverBL"` (TRL max_completion_length). @defaultValue null (required there) */
  maxCompletionLength?: number | null;
  /** Divisor of `"tokenSumOverL"`; null = T of this call (verl default). @defaultValue null */
  lossScaleFactor?: number | null;
  /** Gradient-accumulation steps: every aggregation but `"globalTokenMean"` is divided by it (TRL). @defaultValue 1 */
  accumulationSteps?: number;
  /** An empty mask gives loss `"zero"` (TRL clamps counts at 1) or `"nan"` (verl). @defaultValue "zero" */
  emptyBatch?: 'zero' | 'nan';
  /** Keep the policy term only on tokens whose entropy is ≥ the (1 − q) quantile (TRL); 1 = off. @defaultValue 1 */
  topEntropyQuantile?: number;
}

/** {@link PolicyLossOptions} plus where to run (not part of a preset or a trainer's loss config). */
export interface PolicyLossCallOptions extends PolicyLossOptions {
  /**
   * `'cpu'`, `'cuda'` (GRPO_CUDA_UNAVAILABLE without a usable GPU; the CPU's result to float rounding, see
   * docs/cuda.md) or `'auto'` (CUDA when available). @defaultValue 'cpu'
   */
  device?: Device;
}

/** Loss statistics, named as TRL and verl log them. Token means are over this call's masked tokens. */
export interface PolicyLossStats {
  /** The policy term alone, aggregated like the loss (TRL `policy_loss`, verl `pg_loss`). */
  policyLoss: number;
  /** Mean KL per token (TRL `kl`; KL × ratio with `klBiasCorrection`, as TRL logs it); NaN without refLogp. */
  kl: number;
  /**
   * r < 1 − εl with A < 0 (TRL `clip_ratio/low_mean`). Like the high and region ratios: a token mean, but at
   * `isLevel: "sequence"` with [B] advantages the mean over the B sequences of each one's flag, as TRL logs its
   * [B, 1] ratio.
   */
  clipRatioLow: number;
  /** r > 1 + εh with A > 0 (TRL `clip_ratio/high_mean`; CISPO: r above the cap). */
  clipRatioHigh: number;
  /** Either (TRL `clip_ratio/region_mean`, verl `pg_clipfrac`). */
  clipRatioRegion: number;
  /** Tokens held by the dual clip (verl `pg_clipfrac_lower`). */
  dualClipRatio: number;
  ratioMean: number;
  ratioMin: number;
  ratioMax: number;
  /** Mean entropy (TRL `entropy`); NaN without entropy. */
  entropy: number;
  /** mean(−log r) (verl `ppo_kl`); at the token level log r after `logRatioClamp` (verl ±20). */
  ppoKl: number;
  /** Σ mask. */
  tokens: number;
  /** `lossType: "vespo"`: mean φ over the B sequences ([B] advantages; per token with [B, T]) (TRL `vespo/phi_seq_mean`); else NaN. */
  phiSeqMean: number;
}

export interface PolicyLossResult {
  loss: number;
  /** [B, T] d(loss)/d(logp). */
  gradLogp: Float32Array;
  stats: PolicyLossStats;
}

/** The defaults: TRL HEAD (loss_type "dapo" = clip + global token mean, ε 0.2, β 0). */
export const LOSS_DEFAULTS = Object.freeze({
  lossType: 'clip',
  isLevel: 'token',
  epsilonLow: 0.2,
  epsilonHigh: null,
  delta: null,
  dualClipC: null,
  logRatioClamp: null,
  cispoCap: 5,
  sapoTauPos: 1,
  sapoTauNeg: 1.05,
  vespo: Object.freeze({ kPos: 2, lambdaPos: 3, kNeg: 3, lambdaNeg: 2 }),
  numItems: null,
  beta: 0,
  klEstimator: 'k3',
  klClamp: 'none',
  klBiasCorrection: false,
  klK2Gradient: false,
  aggregation: 'globalTokenMean',
  tokenCount: null,
  sequenceCount: null,
  maxCompletionLength: null,
  lossScaleFactor: null,
  accumulationSteps: 1,
  emptyBatch: 'zero',
  topEntropyQuantile: 1,
} as const);

export const LOSS_TYPES: readonly LossType[] = ['clip', 'cispoCap', 'cispoClamp', 'sapo', 'vespo', 'gpg', 'geoMean', 'none'];
export const IS_LEVELS: readonly IsLevel[] = ['token', 'sequence', 'sequenceToken', 'item'];
export const KL_ESTIMATORS: readonly KlEstimator[] = ['k1', 'abs', 'k2', 'k3'];
export const KL_CLAMPS: readonly KlClamp[] = ['none', 'verl', 'openrlhf'];
export const AGGREGATIONS: readonly Aggregation[] = [
  'globalTokenMean', 'localTokenMean', 'seqMeanTokenMean', 'seqMeanTokenSum', 'tokenSumOverBL', 'tokenSumOverL',
  'allPositionsLengthWeighted',
];
const KEYS = Object.keys(LOSS_DEFAULTS);
const INPUT_KEYS = ['shape', 'logp', 'oldLogp', 'refLogp', 'advantages', 'mask', 'segments', 'entropy'] as const;
const FN = 'policyLoss';

/** Every option with its default filled in and checked: the one place presets and overrides resolve. */
export type ResolvedLossOptions = { -readonly [K in keyof typeof LOSS_DEFAULTS]-?: NonNullable<PolicyLossOptions[K]> | null };

const nonNegative = (name: string, v: unknown) =>
  check.number(`${FN} ${name}`, v, (x) => x >= 0 && Number.isFinite(x), 'to be finite and >= 0');
const positive = (name: string, v: unknown) =>
  check.number(`${FN} ${name}`, v, (x) => x > 0 && Number.isFinite(x), 'to be finite and > 0');
const optional = (name: string, v: unknown, read: (n: string, x: unknown) => number) =>
  (v === null || v === undefined ? null : read(name, v));

/** TRL luspo's all-positions mean has a token or sequence ratio (padding has no item). */
function allPositionsLevel(aggregation: Aggregation, isLevel: IsLevel): Aggregation {
  if (aggregation === 'allPositionsLengthWeighted' && isLevel === 'item') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} isLevel "token", "sequence" or "sequenceToken" with aggregation "allPositionsLengthWeighted" but received "item"`);
  }
  return aggregation;
}

/**
 * Fills in {@link LOSS_DEFAULTS} and checks every option: the one place where presets and overrides
 * become the fields the native kernel reads. `geoMean` resolves `isLevel` to `"token"`.
 */
export function resolveLossOptions(options?: PolicyLossOptions): ResolvedLossOptions {
  check.knownKeys(FN, options, KEYS);
  const o = { ...LOSS_DEFAULTS, ...options };
  check.knownKeys(`${FN} vespo`, o.vespo, ['kPos', 'lambdaPos', 'kNeg', 'lambdaNeg']);
  const vespo = { ...LOSS_DEFAULTS.vespo, ...o.vespo };
  for (const [k, v] of Object.entries(vespo)) nonNegative(`vespo.${k}`, v);
  const lossType = check.oneOf(`${FN} lossType`, o.lossType, LOSS_TYPES);
  const isLevel = check.oneOf(`${FN} isLevel`, o.isLevel, IS_LEVELS);
  const level = lossType === 'geoMean' ? 'token' : isLevel; // GMPO forms its own sequence ratio
  return {
    lossType,
    isLevel: level,
    epsilonLow: nonNegative('epsilonLow', o.epsilonLow),
    epsilonHigh: optional('epsilonHigh', o.epsilonHigh, nonNegative),
    delta: optional('delta', o.delta, positive),
    dualClipC: optional('dualClipC', o.dualClipC, (n, v) =>
      check.number(`${FN} ${n}`, v, (x) => x > 1 && Number.isFinite(x), 'to be finite and > 1')),
    logRatioClamp: optional('logRatioClamp', o.logRatioClamp, positive),
    cispoCap: positive('cispoCap', o.cispoCap),
    sapoTauPos: positive('sapoTauPos', o.sapoTauPos),
    sapoTauNeg: positive('sapoTauNeg', o.sapoTauNeg),
    vespo,
    numItems: optional('numItems', o.numItems, (n, v) => check.integer(`${FN} ${n}`, v, 1, 2 ** 31 - 1)),
    beta: nonNegative('beta', o.beta),
    klEstimator: check.oneOf(`${FN} klEstimator`, o.klEstimator, KL_ESTIMATORS),
    klClamp: check.oneOf(`${FN} klClamp`, o.klClamp, KL_CLAMPS),
    klBiasCorrection: check.boolean(`${FN} klBiasCorrection`, o.klBiasCorrection),
    klK2Gradient: check.boolean(`${FN} klK2Gradient`, o.klK2Gradient),
    aggregation: allPositionsLevel(check.oneOf(`${FN} aggregation`, o.aggregation, AGGREGATIONS), level),
    tokenCount: optional('tokenCount', o.tokenCount, positive),
    sequenceCount: optional('sequenceCount', o.sequenceCount, positive),
    maxCompletionLength: optional('maxCompletionLength', o.maxCompletionLength, positive),
    lossScaleFactor: optional('lossScaleFactor', o.lossScaleFactor, positive),
    accumulationSteps: check.number(`${FN} accumulationSteps`, o.accumulationSteps, (x) => x >= 1 && Number.isFinite(x), 'to be finite and >= 1'),
    emptyBatch: check.oneOf(`${FN} emptyBatch`, o.emptyBatch, ['zero', 'nan'] as const),
    topEntropyQuantile: check.number(`${FN} topEntropyQuantile`, o.topEntropyQuantile, (x) => x > 0 && x <= 1, 'in (0, 1]'),
  };
}

/** The options as native/addon/loss_addon.cc reads them, by field name: null (off, or this call's count) is 0 there. */
function nativeOptions(o: ResolvedLossOptions, numItems: number): NativeLossOptions {
  return {
    ...o, epsilonHigh: o.epsilonHigh ?? o.epsilonLow, delta: o.delta ?? 0, dualClipC: o.dualClipC ?? 0, logRatioClamp: o.logRatioClamp ?? 0,
    numItems, tokenCount: o.tokenCount ?? 0, sequenceCount: o.sequenceCount ?? 0, maxCompletionLength: o.maxCompletionLength ?? 0,
    lossScaleFactor: o.lossScaleFactor ?? 0,
  } as NativeLossOptions;
}

function optionalTokens<T extends Float32Array | Int32Array>(name: string, value: T | undefined, size: number, shape: string,
  read: (n: string, v: unknown) => T): T | null {
  if (value === undefined) return null;
  const array = read(`${FN} ${name}`, value);
  check.length(`${FN} ${name}`, array, size, shape);
  return array;
}

interface Checked {
  rows: number;
  cols: number;
  logp: Float32Array;
  advantages: Float32Array;
  mask: Uint8Array;
  old: Float32Array | null;
  ref: Float32Array | null;
  segments: Int32Array | null;
  entropy: Float32Array | null;
}

function checkInput(input: PolicyLossInput): Checked {
  if (input === null || typeof input !== 'object') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} input object but received ${String(input)}`);
  }
  check.knownKeys(`${FN} input`, input, INPUT_KEYS);
  if (!Array.isArray(input.shape) || input.shape.length !== 2) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} shape [B, T] but received ${String(input.shape)}`);
  }
  const rows = check.integer(`${FN} shape[0]`, input.shape[0], 0);
  const cols = check.integer(`${FN} shape[1]`, input.shape[1], 0);
  const size = rows * cols;
  const shape = `[B, T] = [${rows}, ${cols}]`;
  const tokens = <T extends Float32Array | Int32Array>(name: string, v: T | undefined, read: (n: string, x: unknown) => T) =>
    optionalTokens(name, v, size, shape, read);
  const logp = check.float32Array(`${FN} logp`, input.logp);
  check.length(`${FN} logp`, logp, size, shape);
  const mask = check.uint8Array(`${FN} mask`, input.mask);
  check.length(`${FN} mask`, mask, size, shape);
  const advantages = check.float32Array(`${FN} advantages`, input.advantages);
  const perToken = advantages.length === size; // with T = 1, [B, 1] and [B] mean the same
  if (!perToken) check.length(`${FN} advantages`, advantages, rows, `[B, T] = [${rows}, ${cols}] or [B] = [${rows}]`);
  return {
    rows, cols, logp, advantages, mask,
    old: tokens('oldLogp', input.oldLogp, check.float32Array),
    ref: tokens('refLogp', input.refLogp, check.float32Array),
    segments: tokens('segments', input.segments, check.int32Array),
    entropy: tokens('entropy', input.entropy, check.float32Array),
  };
}

/** K of the item level: the option, else the largest segment id + 1. */
function itemCount(o: ResolvedLossOptions, segments: Int32Array | null): number {
  if (o.isLevel !== 'item') return 0;
  if (!segments) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} segments [B, T] with isLevel "item" but received undefined`);
  if (o.numItems !== null) return o.numItems as number;
  let k = 1;
  for (let i = 0; i < segments.length; i++) k = Math.max(k, segments[i] + 1);
  return k;
}

function requirements(o: ResolvedLossOptions, c: Checked): void {
  if ((o.beta as number) > 0 && !c.ref) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} refLogp [B, T] with beta > 0`);
  if ((o.topEntropyQuantile as number) < 1 && !c.entropy) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} entropy [B, T] with topEntropyQuantile < 1`);
  }
  if (o.aggregation === 'tokenSumOverBL' && o.maxCompletionLength === null) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} maxCompletionLength with aggregation "tokenSumOverBL"`);
  }
}

/** Separates `device` from the loss options; anything that is not an options object is left to their validation. */
function splitDevice(options: PolicyLossCallOptions | undefined): { device?: Device; loss?: PolicyLossOptions } {
  if (typeof options !== 'object' || options === null) return { loss: options };
  const { device, ...loss } = options;
  return { device, loss };
}

function run(async: boolean, input: PolicyLossInput, options: PolicyLossCallOptions | undefined) {
  const { device, loss } = splitDevice(options);
  const o = resolveLossOptions(loss);
  const c = checkInput(input);
  requirements(o, c);
  const native = nativeOptions(o, itemCount(o, c.segments));
  const gradLogp = new Float32Array(c.rows * c.cols); // [B, T]
  const backend = kernelBinding(FN, device, 'policyLoss');
  return runNative(async,
    (a) => backend.policyLoss(c.logp, c.old, c.ref, c.advantages, c.mask, c.segments, c.entropy, Math.max(c.cols, 1), native, gradLogp, a),
    ({ loss, ...stats }): PolicyLossResult => ({ loss, gradLogp, stats }));
}

/**
 * The policy loss and its gradient with respect to logp, computed off the event loop.
 * Inputs that are masked out are never read; masked-in NaN / Infinity give GRPO_NON_FINITE.
 * @example
 * const { loss, gradLogp } = policyLossSync({ shape: [B, T], logp, oldLogp, advantages, mask }, { ...presets.trl });
 */
export function policyLoss(input: PolicyLossInput, options?: PolicyLossCallOptions): Promise<PolicyLossResult> {
  return rejectOnThrow(() => run(true, input, options) as Promise<PolicyLossResult>);
}

/** Synchronous {@link policyLoss}. */
export function policyLossSync(input: PolicyLossInput, options?: PolicyLossCallOptions): PolicyLossResult {
  return run(false, input, options) as PolicyLossResult;
}
