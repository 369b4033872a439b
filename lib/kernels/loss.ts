// The clipped GRPO policy loss family with its analytic backward (dL/dlogp), reproducing TRL,
// verl, OpenRLHF and Rank-GRPO. Native kernel: native/kernels/loss/loss*.cc. Presets: ./presets.ts.
import { kernelBinding, type Device, type NativeLossOptions } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import * as check from '../validate.js';
import {
  LOSS_DEFAULTS, LOSS_OPTIONS, type Aggregation, type IsLevel, type PolicyLossOptions, type ResolvedLossOptions,
} from '../options/loss.js';
import { kernelNaming, checkOptions } from '../options/schema.js';
import { rejectOnThrow, runNative } from './native-call.js';

export {
  AGGREGATIONS, IS_LEVELS, KL_CLAMPS, KL_ESTIMATORS, LOSS_DEFAULTS, LOSS_OPTIONS, LOSS_TYPES,
  type Aggregation, type IsLevel, type KlClamp, type KlEstimator, type LossType, type PolicyLossOptions, type ResolvedLossOptions,
} from '../options/loss.js';

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

/** {@link PolicyLossOptions} plus where to run (not part of a preset or a trainer's loss config). */
export interface PolicyLossCallOptions extends PolicyLossOptions {
  /**
   * `'cpu'`, `'cuda'` (GRPO_CUDA_UNAVAILABLE without a usable GPU; the CPU's result to float rounding, see
   * docs/cuda.md) or `'auto'` (CUDA when available). @defaultValue 'cpu'
   */
  device?: Device;
  /**
   * [B, T] a caller's buffer for `gradLogp`, reused across calls (a trainer's step): every element is
   * overwritten (masked-out tokens with 0). It must share no memory with an input. An async call writes it
   * when the call settles, never while it runs. @defaultValue a new Float32Array per call
   */
  out?: Float32Array;
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
  /** [B, T] d(loss)/d(logp); the `out` buffer when one was given. */
  gradLogp: Float32Array;
  stats: PolicyLossStats;
}

const INPUT_KEYS = ['shape', 'logp', 'oldLogp', 'refLogp', 'advantages', 'mask', 'segments', 'entropy'] as const;
const FN = 'policyLoss';
const NAMING = kernelNaming(FN);

/** TRL luspo's all-positions mean has a token or sequence ratio (padding has no item). */
function allPositionsLevel(aggregation: Aggregation, isLevel: IsLevel): Aggregation {
  if (aggregation === 'allPositionsLengthWeighted' && isLevel === 'item') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} isLevel "token", "sequence" or "sequenceToken" with aggregation "allPositionsLengthWeighted" but received "item"`);
  }
  return aggregation;
}

/**
 * Fills in {@link LOSS_DEFAULTS} and checks every option against {@link LOSS_OPTIONS}: the one place where presets
 * and overrides become the fields the native kernel reads. `geoMean` resolves `isLevel` to `"token"`.
 */
export function resolveLossOptions(options?: PolicyLossOptions): ResolvedLossOptions {
  const o = checkOptions(LOSS_OPTIONS, NAMING, options, LOSS_DEFAULTS);
  const isLevel = o.lossType === 'geoMean' ? 'token' : o.isLevel; // GMPO forms its own sequence ratio
  return { ...o, isLevel, aggregation: allPositionsLevel(o.aggregation, isLevel) };
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

/** Separates `device` and `out` from the loss options; anything that is not an options object is left to their validation. */
function splitCall(options: PolicyLossCallOptions | undefined): { device?: Device; out?: unknown; loss?: PolicyLossOptions } {
  if (typeof options !== 'object' || options === null) return { loss: options };
  const { device, out, ...loss } = options;
  return { device, out, loss };
}

/** The [B, T] gradient buffer: the caller's `out`, checked, or a new one. */
function gradientBuffer(out: unknown, c: Checked): Float32Array {
  const size = c.rows * c.cols;
  if (out === undefined) return new Float32Array(size);
  const { logp, old: oldLogp, ref: refLogp, advantages, mask, segments, entropy } = c;
  return check.outputBuffer(`${FN} out`, out, size, `[B, T] = [${c.rows}, ${c.cols}]`,
    { logp, oldLogp, refLogp, advantages, mask, segments, entropy });
}

function run(async: boolean, input: PolicyLossInput, options: PolicyLossCallOptions | undefined) {
  const { device, out, loss } = splitCall(options);
  const o = resolveLossOptions(loss);
  const c = checkInput(input);
  requirements(o, c);
  const native = nativeOptions(o, itemCount(o, c.segments));
  const gradLogp = gradientBuffer(out, c); // [B, T]
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
