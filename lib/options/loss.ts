// The options of policyLoss (lib/kernels/loss.ts), declared once: the four choices (surrogate, IS level,
// KL, aggregation) as separate fields. See docs/advantages-and-loss.md.
import {
  ABOVE_ONE, AT_LEAST_ONE, boolean, choice, defaultsOf, integer, nested, nullable, number, POSITIVE, UNIT_OPEN_CLOSED,
  type OptionsOf, type ValuesOf,
} from './schema.js';

export const LOSS_TYPES = ['clip', 'cispoCap', 'cispoClamp', 'sapo', 'vespo', 'gpg', 'geoMean', 'none'] as const;
export const IS_LEVELS = ['token', 'sequence', 'sequenceToken', 'item'] as const;
export const KL_ESTIMATORS = ['k1', 'abs', 'k2', 'k3'] as const;
export const KL_CLAMPS = ['none', 'verl', 'openrlhf'] as const;
export const AGGREGATIONS = [
  'globalTokenMean', 'localTokenMean', 'seqMeanTokenMean', 'seqMeanTokenSum', 'tokenSumOverBL', 'tokenSumOverL',
  'allPositionsLengthWeighted',
] as const;
export type LossType = (typeof LOSS_TYPES)[number];
export type IsLevel = (typeof IS_LEVELS)[number];
export type KlEstimator = (typeof KL_ESTIMATORS)[number];
export type KlClamp = (typeof KL_CLAMPS)[number];
export type Aggregation = (typeof AGGREGATIONS)[number];

const VESPO_OPTIONS = {
  kPos: number(2, 'k for A ≥ 0 (TRL `vespo_k_pos`).'),
  lambdaPos: number(3, 'λ for A ≥ 0 (TRL `vespo_lambda_pos`).'),
  kNeg: number(3, 'k for A < 0 (TRL `vespo_k_neg`).'),
  lambdaNeg: number(2, 'λ for A < 0 (TRL `vespo_lambda_neg`).'),
};

/** The defaults are TRL HEAD's (loss_type "dapo" = clip + global token mean, ε 0.2, β 0). */
export const LOSS_OPTIONS = {
  lossType: choice(LOSS_TYPES, 'clip', '`"clip"` (TRL grpo/bnpo/dr_grpo/dapo/luspo, verl vanilla/gspo), `"cispoCap"` (TRL cispo: '
    + 'sg(min(r, cap))·A·logp), `"cispoClamp"` (verl cispo), `"sapo"`, `"vespo"` (TRL), `"gpg"` (verl), `"geoMean"` (verl GMPO: '
    + 'row mean, ignores `isLevel` and `aggregation` for its policy term, which is a mean over `sequenceCount` rows), `"none"` '
    + '(no policy term: the KL term alone, see klLoss).'),
  isLevel: choice(IS_LEVELS, 'token', '`"token"`, `"sequence"` (TRL GSPO), `"sequenceToken"` (verl gspo), `"item"` (Rank-GRPO, needs segments).'),
  epsilonLow: number(0.2, 'Lower clip range: r ≥ 1 − epsilonLow (TRL `epsilon`, verl `clip_ratio_low`).'),
  epsilonHigh: nullable(number(undefined, 'Upper clip range: r ≤ 1 + epsilonHigh; null = epsilonLow (TRL `epsilon_high`).')),
  delta: nullable(number(undefined, 'TRL `delta` (INTELLECT-2): r := min(r, delta) in the unclipped branch; null = off.', POSITIVE)),
  dualClipC: nullable(number(undefined, 'verl `clip_ratio_c` dual clip: for A < 0 the loss is at most −A·c; null = off.', ABOVE_ONE)),
  logRatioClamp: nullable(number(undefined, 'Clamp of the log-ratio before exp (verl/OpenRLHF 20, verl gspo 10); null = none (TRL).', POSITIVE)),
  cispoCap: number(5, '`"cispoCap"`: the absolute ratio cap (TRL `epsilon_high` with loss_type cispo).', POSITIVE),
  sapoTauPos: number(1, 'SAPO temperature for A > 0.', POSITIVE),
  sapoTauNeg: number(1.05, 'SAPO temperature for A ≤ 0.', POSITIVE),
  vespo: nested(VESPO_OPTIONS, 'VESPO (k, λ) for A ≥ 0 and A < 0 (TRL vespo_k_pos / lambda_pos / k_neg / lambda_neg).'),
  numItems: nullable(integer(undefined, 'K at the item level: segments ≥ K share one overflow ratio.', 1, 2 ** 31 - 1),
    { defaultDoc: 'the largest segment + 1' }),
  beta: number(0, 'KL coefficient β (TRL `beta`, verl `kl_loss_coef`); 0 = no KL term.'),
  klEstimator: choice(KL_ESTIMATORS, 'k3', 'KL estimator of logp against refLogp.'),
  klClamp: choice(KL_CLAMPS, 'none', '`"none"` (TRL), `"verl"` (k3: log-ratio ±20, value ±10), `"openrlhf"` (every value ±10).'),
  klBiasCorrection: boolean(false, 'TRL `use_bias_correction_kl`: KL × ratio (in the loss and in the logged `stats.kl`).'),
  klK2Gradient: boolean(false, 'verl\'s straight-through estimators (`kl_loss_type` "k1+", "k3+", "low_var_kl+"): the value of '
    + '`klEstimator`, the gradient of k2, ½(logp − ref)², i.e. logp − ref.'),
  aggregation: choice(AGGREGATIONS, 'globalTokenMean', '`"globalTokenMean"` Σℓ/tokenCount (TRL dapo/cispo/vespo), `"localTokenMean"` '
    + 'Σℓ/Σmask (TRL bnpo, verl legacy token-mean), `"seqMeanTokenMean"` (TRL grpo/sapo), `"seqMeanTokenSum"` (verl; TRL luspo), '
    + '`"tokenSumOverBL"` Σℓ/(B·maxCompletionLength) (TRL dr_grpo), `"tokenSumOverL"` Σℓ/lossScaleFactor (verl '
    + 'seq-mean-token-sum-norm), `"allPositionsLengthWeighted"` Σ over all B·T positions, padding included, of ℓ·n_i / (B·T) '
    + '(TRL luspo\'s `(per_token_loss * mask.sum(1)).mean()` with a [B, T] per-token loss: token level, or sequence level with '
    + 'β > 0; padding\'s own logp, old, ref and advantages are read, must be finite and get a gradient; not at the item level).'),
  tokenCount: nullable(number(undefined, 'Global token count of `"globalTokenMean"` (TRL num_items_in_batch / num_processes); null = Σ mask of this call.', POSITIVE)),
  sequenceCount: nullable(number(undefined, 'Sequences in the mean (and B of tokenSumOverBL); null = B of this call (verl: the non-empty ones).', POSITIVE)),
  maxCompletionLength: nullable(number(undefined, 'L_max of `"tokenSumOverBL"` (TRL max_completion_length); required there.', POSITIVE)),
  lossScaleFactor: nullable(number(undefined, 'Divisor of `"tokenSumOverL"`; null = T of this call (verl default).', POSITIVE)),
  accumulationSteps: number(1, 'Gradient-accumulation steps: every aggregation but `"globalTokenMean"` is divided by it (TRL).', AT_LEAST_ONE),
  emptyBatch: choice(['zero', 'nan'] as const, 'zero', 'An empty mask gives loss `"zero"` (TRL clamps counts at 1) or `"nan"` (verl).'),
  topEntropyQuantile: number(1, 'Keep the policy term only on tokens whose entropy is ≥ the (1 − q) quantile (TRL); 1 = off.', UNIT_OPEN_CLOSED),
};

/** Options of policyLoss, as a caller (or a preset) writes them. */
export type PolicyLossOptions = OptionsOf<typeof LOSS_OPTIONS>;
/** Every option with its default filled in and checked. */
export type ResolvedLossOptions = ValuesOf<typeof LOSS_OPTIONS>;

export const LOSS_DEFAULTS = defaultsOf(LOSS_OPTIONS);
