// verl's standalone KL loss, agg_loss(kl_penalty(logp, ref, kl_loss_type), mask, loss_agg_mode)
// (verl/trainer/ppo/core_algos.py kl_penalty, agg_loss; workers/actor/dp_actor.py), forward and
// gradient: the policy-loss kernel with no policy term (lossType "none", β = 1).
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import * as check from '../validate.js';
import { checkOptions } from '../options/schema.js';
import { rejectOnThrow } from './native-call.js';
import {
  policyLoss, policyLossSync, type Aggregation, type KlEstimator, type PolicyLossCallOptions, type PolicyLossInput,
  type PolicyLossResult,
} from './loss.js';

/** verl `kl_loss_type`; a trailing "+" keeps the value and takes the gradient of k2 (straight-through). */
export type VerlKlType =
  | 'kl' | 'k1' | 'abs' | 'mse' | 'k2' | 'low_var_kl' | 'k3' | 'kl+' | 'k1+' | 'abs+' | 'mse+' | 'k2+' | 'low_var_kl+' | 'k3+';

/** verl `loss_agg_mode`. */
export type VerlAggregation = 'token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-mean' | 'seq-mean-token-sum-norm';

export const VERL_KL_TYPES = [
  'kl', 'k1', 'abs', 'mse', 'k2', 'low_var_kl', 'k3', 'kl+', 'k1+', 'abs+', 'mse+', 'k2+', 'low_var_kl+', 'k3+',
] as const satisfies readonly VerlKlType[];
export const VERL_AGGREGATIONS = [
  'token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm',
] as const satisfies readonly VerlAggregation[];

/** Inputs of {@link klLoss}; every [B, T] array is row-major. */
export interface KlLossInput {
  /** [B, T] */
  shape: readonly [number, number];
  /** [B, T] current-policy log-probs (the gradient is taken with respect to these). */
  logp: Float32Array;
  /** [B, T] reference log-probs. */
  refLogp: Float32Array;
  /** [B, T] 0/1 loss mask (verl response_mask); masked-out values are never read. */
  mask: Uint8Array;
}

export const KL_LOSS_OPTIONS = {
  klType: opt.choice(VERL_KL_TYPES, 'low_var_kl', 'verl `kl_loss_type`; the default is verl\'s (k3, log-ratio ±20, value ±10); a trailing "+" '
    + 'keeps the value and takes the gradient of k2.'),
  aggregation: opt.choice(VERL_AGGREGATIONS, 'token-mean', 'verl `loss_agg_mode`.'),
  tokenCount: opt.nullable(opt.number(undefined, 'token-mean denominator (verl batch_num_tokens / dp_size); null = Σ mask of this call.', opt.POSITIVE)),
  sequenceCount: opt.nullable(opt.number(undefined, 'seq-mean-* denominator (verl global_batch_size / dp_size); null = the rows with a token (verl).', opt.POSITIVE)),
  lossScaleFactor: opt.nullable(opt.number(undefined, 'seq-mean-token-sum-norm divisor; null = T (verl).', opt.POSITIVE)),
  device: opt.device(),
};

export type KlLossOptions = opt.OptionsOf<typeof KL_LOSS_OPTIONS>;

const KL_LOSS_DEFAULTS = opt.defaultsOf(KL_LOSS_OPTIONS);

export interface KlLossResult {
  /** The aggregated KL (verl `actor/kl_loss` before × kl_loss_coef). */
  loss: number;
  /** [B, T] d(loss)/d(logp). */
  gradLogp: Float32Array;
  /** kl: mean KL per masked token; tokens: Σ mask. */
  stats: { kl: number; tokens: number };
}

const FN = 'klLoss';
const ESTIMATORS: Record<string, KlEstimator> = { kl: 'k1', k1: 'k1', abs: 'abs', mse: 'k2', k2: 'k2', low_var_kl: 'k3', k3: 'k3' };
const AGGREGATIONS: Record<VerlAggregation, Aggregation> = {
  'token-mean': 'globalTokenMean',
  'seq-mean-token-sum': 'seqMeanTokenSum',
  'seq-mean-token-mean': 'seqMeanTokenMean',
  'seq-mean-token-sum-norm': 'tokenSumOverL',
};

/** verl divides seq-mean modes by the sequences that have a token; null when there are none (the loss is NaN then). */
function rowsWithTokens(input: KlLossInput): number | null {
  const mask = check.uint8Array(`${FN} mask`, input.mask);
  const cols = Array.isArray(input.shape) ? check.integer(`${FN} shape[1]`, input.shape[1], 0) : 0;
  let rows = 0;
  for (let start = 0; start + cols <= mask.length && cols > 0; start += cols) rows += mask.subarray(start, start + cols).some((m) => m !== 0) ? 1 : 0;
  return rows > 0 ? rows : null;
}

function call(input: KlLossInput, options: KlLossOptions | undefined): [PolicyLossInput, PolicyLossCallOptions] {
  if (input === null || typeof input !== 'object') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} input object but received ${String(input)}`);
  }
  check.knownKeys(`${FN} input`, input, ['shape', 'logp', 'refLogp', 'mask']);
  const o = checkOptions(KL_LOSS_OPTIONS, opt.kernelNaming(FN), options, KL_LOSS_DEFAULTS);
  const { klType, aggregation } = o;
  const refLogp = check.float32Array(`${FN} refLogp`, input.refLogp);
  const seqMean = aggregation === 'seq-mean-token-sum' || aggregation === 'seq-mean-token-mean';
  const rows = Array.isArray(input.shape) ? check.integer(`${FN} shape[0]`, input.shape[0], 0) : 0;
  // verl's 0 / 0: an empty mask gives NaN where the denominator is counted from this call
  const countedHere = aggregation === 'token-mean' ? o.tokenCount == null : seqMean && o.sequenceCount == null;
  return [
    { shape: input.shape, logp: input.logp, refLogp, mask: input.mask, advantages: new Float32Array(rows) },
    {
      lossType: 'none', beta: 1, klEstimator: ESTIMATORS[klType.replace('+', '')], klClamp: 'verl',
      klK2Gradient: klType.endsWith('+'), aggregation: AGGREGATIONS[aggregation], tokenCount: o.tokenCount ?? null,
      sequenceCount: o.sequenceCount ?? (seqMean ? rowsWithTokens(input) : null), lossScaleFactor: o.lossScaleFactor ?? null,
      emptyBatch: countedHere ? 'nan' : 'zero', device: o.device,
    },
  ];
}

const result = (r: PolicyLossResult): KlLossResult => ({ loss: r.loss, gradLogp: r.gradLogp, stats: { kl: r.stats.kl, tokens: r.stats.tokens } });

/**
 * verl's KL loss and its gradient with respect to logp, computed off the event loop. Multiply by
 * kl_loss_coef yourself, or use policyLoss with `beta` to add it to a policy term.
 * seq-mean-token-mean divides each row by its token count n (verl: n + 1e-8, a 1e-8/n relative difference).
 * @example
 * const { loss, gradLogp } = klLossSync({ shape: [B, T], logp, refLogp, mask }, { klType: 'low_var_kl', aggregation: 'token-mean' });
 */
export function klLoss(input: KlLossInput, options?: KlLossOptions): Promise<KlLossResult> {
  return rejectOnThrow(() => policyLoss(...call(input, options)).then(result));
}

/** Synchronous {@link klLoss}. */
export function klLossSync(input: KlLossInput, options?: KlLossOptions): KlLossResult {
  return result(policyLossSync(...call(input, options)));
}
