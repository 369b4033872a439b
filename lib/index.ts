// Public API of grpo-native. Each module re-exported here has one job; see README.md.
export { GrpoError, type GrpoErrorCode } from './errors.js';
export { setThreads, getThreads, cpuPath } from './runtime.js';
export {
  logprobs,
  logprobsSync,
  logprobsBackward,
  logprobsBackwardSync,
  linearLogprobs,
  linearLogprobsSync,
  linearLogprobsBackward,
  linearLogprobsBackwardSync,
  type LogprobOptions,
  type LogprobResult,
  type LogprobBackwardOptions,
  type LinearLogprobOptions,
  type LinearLogprobBackwardOptions,
  type LinearLogprobGradients,
  type LinearLogprobResult,
  type SavedLogprobStats,
  type SavedLinearLogprobStats,
} from './kernels/logprob.js';
export {
  matmul, matmulSync, matmulBf16Native, matmulBf16Kernel, type MatmulBf16Kernel, type MatmulOptions, type MatmulShape,
} from './kernels/gemm.js';
export * from './text/index.js';
export * from './rewards/index.js';
export { upstreamYear } from './rewards/items-rankgrpo.js';
export {
  packProblems,
  defaultCcrTemplate,
  CCR_PACK_DEFAULTS,
  ccrReferenceCompletion,
  ccrReward,
  ccrRewardBatch,
  CCR_DEFAULTS,
  extractAnswers,
  informativeGroups,
  type CcrTemplate,
  type CcrPackOptions,
  type CcrRewardOptions,
  type CcrReward,
  type CcrBatchRewards,
  type CcrExtractOptions,
  type CcrExtractedAnswer,
  type CcrAnswerStatus,
  type CcrAnswerSpan,
  type InformativeGroups,
  type PackableProblem,
} from './rewards/ccr.js';
export { verifyAnswer, resolveVerifyOptions, normalizeAnswer, VERIFY_DEFAULTS, type VerifyOptions, type Verdict as VerifyVerdict } from './rewards/verify/index.js';
export { parseGsm8k, parseMathDataset, loadGsm8k, loadMathDataset, gsm8kFinalAnswer, packGroups, PACK_GROUPS_DEFAULTS, type MathProblem, type PackGroupsOptions } from './data/math.js';
export { generateArithmetic, ARITHMETIC_DEFAULTS, type ArithmeticOptions, type ArithmeticProblem } from './data/arithmetic.js';
export { generateStepwise, type StepwiseProblem } from './data/stepwise.js';
export * from './data/index.js';
export {
  groupAdvantages,
  groupAdvantagesSync,
  rankAdvantages,
  rankAdvantagesSync,
  ADVANTAGE_DEFAULTS,
  type NormalizeOptions,
  type GroupAdvantageOptions,
  type GroupAdvantageCallOptions,
  type RankAdvantageOptions,
  type AdvantageStats,
  type RankAdvantageStats,
  type AdvantageResult,
} from './kernels/advantage.js';
export {
  tokenAdvantages,
  tokenAdvantagesSync,
  TOKEN_ADVANTAGE_DEFAULTS,
  type LengthShaping,
  type TokenAdvantageInput,
  type TokenAdvantageOptions,
  type TokenAdvantageResult,
} from './kernels/token-advantages.js';
export {
  assembleRankRewards,
  type RewardFunctionOutput,
  type RankRewardAssemblyOptions,
  type AssembledRankRewards,
} from './batch/rank-rewards.js';
export { completionMask, type CompletionMaskOptions, type CompletionMask } from './batch/completion-mask.js';
export * from './eval/index.js';
export { sample, sampleSync, samplingProbs, samplingProbsSync, type SampleResult } from './kernels/sampling.js';
export { SAMPLING_DEFAULTS, type SamplingOptions, type TokenLists, type TokenMask } from './kernels/sampling-params.js';
export {
  policyLoss,
  policyLossSync,
  resolveLossOptions,
  LOSS_DEFAULTS,
  LOSS_TYPES,
  IS_LEVELS,
  KL_ESTIMATORS,
  KL_CLAMPS,
  AGGREGATIONS,
  type LossType,
  type IsLevel,
  type KlEstimator,
  type KlClamp,
  type Aggregation,
  type PolicyLossInput,
  type PolicyLossOptions,
  type PolicyLossStats,
  type PolicyLossResult,
  type ResolvedLossOptions,
} from './kernels/loss.js';
export { presets, type Preset } from './kernels/presets.js';
export {
  klLoss,
  klLossSync,
  VERL_KL_TYPES,
  VERL_AGGREGATIONS,
  type KlLossInput,
  type KlLossOptions,
  type KlLossResult,
  type VerlKlType,
  type VerlAggregation,
} from './kernels/kl-loss.js';
export { policyLossReference, klReference, type LossReferenceInput } from './reference/loss.js';
export { normalizeGroupsReference, groupsOf, rankCellsOf, itemTokenRowReference } from './reference/advantage.js';
export * from './policy/index.js';
export * from './export/index.js';
export * from './rollout/index.js';
export { loadCuda, DEVICES, type Device, type ResolvedDevice, type CudaLoad, type CudaProbe, type CudaBinding } from './binding/index.js';
export type { SampleCallOptions } from './kernels/sampling.js';
export * from './trainer/index.js';
export type { PolicyLossCallOptions } from './kernels/loss.js';
export { toBf16, fromBf16 } from './kernels/bf16.js';
export type { LinearDtype } from './kernels/logprob.js';
