// Presets: the option values with which each upstream trainer computes its advantages and loss
// (../shared/reference/grpo-implementations.md §1–4, §6.1). Plain frozen objects to spread and override:
//   policyLossSync(input, { ...presets.verl.loss, beta: 0 })
//   groupAdvantagesSync(rewards, { ...presets.verl.advantages, groupIds })
// Counts that only the trainer knows stay per call: tokenCount (global token mean),
// accumulationSteps, maxCompletionLength (Dr. GRPO in TRL), sequenceCount.
import type { GroupAdvantageOptions } from './advantage.js';
import type { PolicyLossOptions } from './loss.js';
import type { TokenAdvantageOptions } from './token-advantages.js';

export interface Preset {
  /** The upstream code and settings this preset reproduces. */
  readonly reproduces: string;
  /** Options of groupAdvantages (rankAdvantages for Rank-GRPO / ReMaRk). */
  readonly advantages: Readonly<GroupAdvantageOptions>;
  /** Options of policyLoss. */
  readonly loss: Readonly<PolicyLossOptions>;
  /** Options of tokenAdvantages, where the trainer places advantages itself. */
  readonly tokenAdvantages?: Readonly<TokenAdvantageOptions>;
}

const preset = (p: Preset): Preset => Object.freeze({ ...p, advantages: Object.freeze(p.advantages), loss: Object.freeze(p.loss) });

const trlAdvantages = { scale: 'group', stdEpsilon: 1e-4, singletonGroup: 'zero', nanRewards: 'exclude' } as const;
const trl021Advantages = { scale: 'group', stdEpsilon: 1e-4, singletonGroup: 'nan', nanRewards: 'asZero' } as const;
const verlAdvantages = { scale: 'group', stdEpsilon: 1e-6, singletonGroup: 'raw', nanRewards: 'exclude' } as const;
const verlClip = { lossType: 'clip', epsilonLow: 0.2, epsilonHigh: 0.2, dualClipC: 3, logRatioClamp: 20 } as const;
const verlKl = { klEstimator: 'k3', klClamp: 'verl' } as const;

/** TRL HEAD (1.9/1.10.dev) defaults: group scaling ε 1e-4, loss_type "dapo" (pass tokenCount = num_items_in_batch / processes), ε 0.2, β 0. */
export const trl = preset({
  reproduces: 'TRL GRPOTrainer HEAD defaults: scale_rewards="group", loss_type="dapo", epsilon=0.2, beta=0',
  advantages: trlAdvantages,
  loss: { lossType: 'clip', isLevel: 'token', epsilonLow: 0.2, epsilonHigh: null, aggregation: 'globalTokenMean', beta: 0, klEstimator: 'k3', klClamp: 'none' },
});

/** TRL 0.21.0 defaults: scale_rewards=True (torch.std, NaN rewards summed as 0), loss_type "bnpo" (pass accumulationSteps). */
export const trl021 = preset({
  reproduces: 'TRL 0.21.0 GRPOTrainer defaults: scale_rewards=True, loss_type="bnpo", epsilon=0.2, beta=0',
  advantages: trl021Advantages,
  loss: { ...trl.loss, aggregation: 'localTokenMean' },
});

/** The released Rank-GRPO settings (TRL 0.21.0 patch): rank-wise advantages, item-level ratio, ε 0.06/0.08, β 1e-3 k3, bnpo. */
export const rankGrpo = preset({
  reproduces: 'yaochenzhu/Rank-GRPO train_rank_grpo.py: importance_sampling_level="item", epsilon=0.06, epsilon_high=0.08, kl_beta=1e-3, bnpo, rec_num=20, length shaping on',
  advantages: trl021Advantages,
  loss: { lossType: 'clip', isLevel: 'item', epsilonLow: 0.06, epsilonHigh: 0.08, beta: 1e-3, klEstimator: 'k3', klClamp: 'none', aggregation: 'localTokenMean', numItems: 20 },
  tokenAdvantages: { ranks: 20, lengthShaping: { enabled: true, endOfList: 0.1, extraToken: -0.1, earlyStop: -0.1 } },
});

/** ReMaRk = Rank-GRPO's rank-wise normalisation and loss; request-level sampling is the data layer's job. */
export const remark = preset({ ...rankGrpo, reproduces: `ReMaRk: rewards normalised per rank as in ${rankGrpo.reproduces}` });

/** verl GRPO defaults (legacy workers): uid groups, ε 1e-6, vanilla clip with c = 3, ±20 clamp, local token-mean, k3 KL loss β 0.001. */
export const verl = preset({
  reproduces: 'verl 0.8 GRPO: norm_adv_by_std_in_grpo=True, loss_mode="vanilla" (clip_ratio_c=3), token-mean (legacy, local), use_kl_loss with kl_loss_coef=0.001 low_var_kl',
  advantages: verlAdvantages,
  loss: { ...verlClip, isLevel: 'token', aggregation: 'localTokenMean', beta: 0.001, ...verlKl },
});

/** Dr. GRPO in TRL: no std scaling, Σℓ / (B · max_completion_length) (pass maxCompletionLength). */
export const drGrpoTrl = preset({
  reproduces: 'TRL scale_rewards="none", loss_type="dr_grpo"',
  advantages: { ...trlAdvantages, scale: 'none' },
  loss: { ...trl.loss, aggregation: 'tokenSumOverBL' },
});

/** Dr. GRPO in verl: no std scaling, Σℓ / loss_scale_factor (= T by default, no division by B), no KL loss. */
export const drGrpoVerl = preset({
  reproduces: 'verl norm_adv_by_std_in_grpo=False, loss_agg_mode="seq-mean-token-sum-norm", use_kl_loss=False',
  advantages: { ...verlAdvantages, scale: 'none' },
  loss: { ...verl.loss, aggregation: 'tokenSumOverL', beta: 0 },
});

/** GSPO as TRL runs it: sequence-level ratio with the gradient through the mean, loss_type "grpo". */
export const gspoTrl = preset({
  reproduces: 'TRL importance_sampling_level="sequence", loss_type="grpo" (the GSPO paper used epsilon 3e-4 / 4e-4)',
  advantages: trlAdvantages,
  loss: { ...trl.loss, isLevel: 'sequence', aggregation: 'seqMeanTokenMean' },
});

/** GSPO as verl runs it: sequence value with per-token gradient, log-ratio ≤ 10, seq-mean-token-mean, no dual clip. */
export const gspoVerl = preset({
  reproduces: 'verl policy_loss.loss_mode="gspo" (aggregation forced to seq-mean-token-mean)',
  advantages: verlAdvantages,
  loss: { ...verl.loss, isLevel: 'sequenceToken', logRatioClamp: 10, dualClipC: null, aggregation: 'seqMeanTokenMean' },
});

/** verl loss_mode "sapo": token ratio (log clamped ±20), τ+ 1.0 / τ− 1.05, aggregation forced to seq-mean-token-mean. */
export const verlSapo = preset({
  reproduces: 'verl policy_loss.loss_mode="sapo" (tau_pos=1.0, tau_neg=1.05; aggregation forced to seq-mean-token-mean)',
  advantages: verlAdvantages,
  loss: { ...verl.loss, lossType: 'sapo', sapoTauPos: 1, sapoTauNeg: 1.05, dualClipC: null, aggregation: 'seqMeanTokenMean' },
});

/** verl loss_mode "cispo": −sg(clamp(r, 1 − low, 1 + high))·A·logp, log-ratio ±20, the configured token-mean. */
export const verlCispo = preset({
  reproduces: 'verl policy_loss.loss_mode="cispo" (clip_ratio_low=clip_ratio_high=0.2, loss_agg_mode="token-mean")',
  advantages: verlAdvantages,
  loss: { ...verl.loss, lossType: 'cispoClamp', dualClipC: null },
});

// TRL's loss_type → surrogate and aggregation (grpo_trainer.py _compute_loss). cispo: TRL's epsilon_high is
// the ratio cap (cispoCap), 5.0 as TRL's docs recommend. luspo at the token level: TRL's per-token loss is
// [B, T], so its mean runs over all B·T positions (allPositionsLengthWeighted).
const TRL_LOSS_TYPES = {
  grpo: { lossType: 'clip', aggregation: 'seqMeanTokenMean' },
  bnpo: { lossType: 'clip', aggregation: 'localTokenMean' },
  dr_grpo: { lossType: 'clip', aggregation: 'tokenSumOverBL' },
  dapo: { lossType: 'clip', aggregation: 'globalTokenMean' },
  cispo: { lossType: 'cispoCap', cispoCap: 5, aggregation: 'globalTokenMean' },
  sapo: { lossType: 'sapo', sapoTauPos: 1, sapoTauNeg: 1.05, aggregation: 'seqMeanTokenMean' },
  luspo: { lossType: 'clip', aggregation: 'allPositionsLengthWeighted' },
  vespo: { lossType: 'vespo', aggregation: 'globalTokenMean' },
} as const satisfies Record<string, PolicyLossOptions>;

/** TRL luspo at the sequence level with β = 0: the per-token loss is [B, 1], the mean is over sequences. */
const TRL_LUSPO_SEQUENCE = { lossType: 'clip', aggregation: 'seqMeanTokenSum' } as const;

function trlLossType(name: keyof typeof TRL_LOSS_TYPES, isLevel: 'token' | 'sequence'): Preset {
  const loss = isLevel === 'sequence' && name === 'luspo' ? TRL_LUSPO_SEQUENCE : TRL_LOSS_TYPES[name];
  return preset({
    reproduces: `TRL GRPOTrainer loss_type="${name}", importance_sampling_level="${isLevel}" (epsilon=0.2, beta=0${name === 'cispo' ? ', epsilon_high=5.0 as the cap' : ''})`,
    advantages: trlAdvantages,
    loss: { ...trl.loss, ...loss, isLevel },
  });
}

/**
 * Every TRL loss_type at both importance-sampling levels (`trlGrpo`, `trlGrpoSequence`, …, `trlVespoSequence`).
 * Counts the trainer knows stay per call: tokenCount (dapo/cispo/vespo), maxCompletionLength (dr_grpo),
 * accumulationSteps (the others). `trlLuspoSequence` is exact for β = 0; with β ≠ 0 TRL's per-token loss is
 * [B, T] and its mean runs over all B·T positions: spread `aggregation: "allPositionsLengthWeighted"`.
 */
export const trlGrpo = trlLossType('grpo', 'token');
export const trlGrpoSequence = trlLossType('grpo', 'sequence');
export const trlBnpo = trlLossType('bnpo', 'token');
export const trlBnpoSequence = trlLossType('bnpo', 'sequence');
export const trlDrGrpo = trlLossType('dr_grpo', 'token');
export const trlDrGrpoSequence = trlLossType('dr_grpo', 'sequence');
export const trlDapo = trlLossType('dapo', 'token');
export const trlDapoSequence = trlLossType('dapo', 'sequence');
export const trlCispo = trlLossType('cispo', 'token');
export const trlCispoSequence = trlLossType('cispo', 'sequence');
export const trlSapo = trlLossType('sapo', 'token');
export const trlSapoSequence = trlLossType('sapo', 'sequence');
export const trlLuspo = trlLossType('luspo', 'token');
export const trlLuspoSequence = trlLossType('luspo', 'sequence');
export const trlVespo = trlLossType('vespo', 'token');
export const trlVespoSequence = trlLossType('vespo', 'sequence');

/** Every preset by name. */
export const presets = Object.freeze({
  trl, trl021, rankGrpo, remark, verl, drGrpoTrl, drGrpoVerl, gspoTrl, gspoVerl, verlSapo, verlCispo,
  trlGrpo, trlGrpoSequence, trlBnpo, trlBnpoSequence, trlDrGrpo, trlDrGrpoSequence, trlDapo, trlDapoSequence,
  trlCispo, trlCispoSequence, trlSapo, trlSapoSequence, trlLuspo, trlLuspoSequence, trlVespo, trlVespoSequence,
});
