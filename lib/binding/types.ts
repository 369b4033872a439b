// The raw shape of the addons' exports (native/addon/*.cc; the CUDA addon links the same glue): one typed surface
// for the CPU addon (NativeBinding) and one for the CUDA addon (CudaBinding). Arrays are passed zero-copy; outputs
// are allocated by the TS layer. Options cross as plain objects read by field name (an unknown or missing field is
// a GrpoError naming it), enums by their string names; stats come back as plain objects. `async` = true returns a
// Promise that settles (with the call's result) when the kernel has run on a worker thread.

type F32 = Float32Array;
type I32 = Int32Array;
type F64 = Float64Array;
type Done = Promise<void> | undefined;
/** A call's result, or a Promise of it when called with `async`. */
type Returns<T> = T | Promise<T>;

/**
 * Opaque handle of a native model, shared with the async calls in flight on it: the model is freed once the handle
 * is collected or passed to modelDispose and the last such call has finished. While one runs, every other call on
 * the handle but modelTensors throws (the model is busy).
 */
export type ModelHandle = { readonly __model: unique symbol };

/** grpo_logprob_options (native/include/grpo/logprob.h). */
export interface NativeLogprobOptions {
  temperature: number;
  ignoreIndex: number;
}

/** grpo_linear_logprob_options: tiles of chunkRows × chunkVocab. */
export interface NativeLinearLogprobOptions extends NativeLogprobOptions {
  chunkRows: number;
  chunkVocab: number;
}

/** grpo_advantage_options (native/include/grpo/advantage.h); enums by name. */
export interface NativeAdvantageOptions {
  scale: 'group' | 'batch' | 'none';
  singletonGroup: 'zero' | 'raw' | 'nan';
  nanRewards: 'exclude' | 'asZero';
  stdEpsilon: number;
}

/** grpo_advantage_stats of groupAdvantages. */
export interface NativeAdvantageStats {
  rewardMean: number;
  rewardStd: number;
  fracRewardZeroStd: number;
}

/** grpo_advantage_stats of rankAdvantages, with the (group, rank) cell fractions. */
export interface NativeRankAdvantageStats extends NativeAdvantageStats {
  fracCellsEqual: number;
  fracCellsZero: number;
}

/** grpo_length_shaping. */
export interface NativeLengthShaping {
  enabled: boolean;
  endOfList: number;
  extraToken: number;
  earlyStop: number;
}

/**
 * grpo_loss_options (native/include/grpo/loss.h) field by field; 0 turns off delta, dualClipC, logRatioClamp and
 * means "this call's count" for tokenCount, sequenceCount and lossScaleFactor. Enums by name (native/addon/loss_addon.cc).
 */
export interface NativeLossOptions {
  lossType: string;
  epsilonLow: number;
  epsilonHigh: number;
  delta: number;
  dualClipC: number;
  logRatioClamp: number;
  cispoCap: number;
  sapoTauPos: number;
  sapoTauNeg: number;
  vespo: { kPos: number; lambdaPos: number; kNeg: number; lambdaNeg: number };
  isLevel: string;
  /** K at the item level; 0 elsewhere. */
  numItems: number;
  beta: number;
  klEstimator: string;
  klClamp: string;
  klBiasCorrection: boolean;
  klK2Gradient: boolean;
  aggregation: string;
  emptyBatch: 'zero' | 'nan';
  tokenCount: number;
  sequenceCount: number;
  maxCompletionLength: number;
  lossScaleFactor: number;
  accumulationSteps: number;
  topEntropyQuantile: number;
}

/** grpo_loss_stats, named as lib/kernels/loss.ts reports them (PolicyLossStats, plus the loss). */
export type NativeLossStats = Record<
  | 'loss' | 'policyLoss' | 'kl' | 'clipRatioLow' | 'clipRatioHigh' | 'clipRatioRegion' | 'dualClipRatio' | 'ratioMean' | 'ratioMin'
  | 'ratioMax' | 'entropy' | 'ppoKl' | 'tokens' | 'phiSeqMean',
  number
>;

/** The layout of C = alpha·op(A)·op(B) + beta·C (row-major; native/include/grpo/gemm.h). */
/** The kernel the bf16 GEMM runs: AMX tiles, vdpbf16ps, or (not native) the float32 GEMM of the CPU path. */
export type MatmulBf16Kernel = 'amx_bf16' | 'avx512_bf16' | 'avx512' | 'avx2' | 'generic';
export type NativeGemmLayout = Record<'transA' | 'transB', boolean> & Record<'m' | 'n' | 'k' | 'alpha' | 'beta' | 'lda' | 'ldb' | 'ldc', number>;

/**
 * The sampler settings of `sample`, `samplingProbs` and `modelGenerate` (grpo_sampling_params): per-row arrays, null
 * = the default for every row; built by lib/kernels/sampling-params.ts. modelGenerate sets history and step itself.
 */
export interface NativeSamplingParams {
  temperature: F32 | null;
  topK: I32 | null;
  topP: F32 | null;
  minP: F32 | null;
  repetitionPenalty: F32 | null;
  presencePenalty: F32 | null;
  frequencyPenalty: F32 | null;
  /** [B, ceil(V / 32)] allow bits */
  allow: Uint32Array | null;
  history: I32 | null;
  /** [B + 1] */
  historyOffsets: I32 | null;
  seedLo: number;
  seedHi: number;
  stepLo: number;
  stepHi: number;
  /** The rows are rows firstRow.. of a larger batch and draw what that batch draws for them (0 = a batch of their own). */
  firstRow: number;
}

/** grpo_generate_options (native/include/grpo/model.h). */
export interface NativeGenerateOptions {
  maxNewTokens: number;
  /** A row ends after sampling any of these (kept in the output). */
  stopTokens: I32;
  sampling: NativeSamplingParams;
}

/** grpo_model_config (native/include/grpo/model.h), named as lib/policy/config.ts names it. */
export type NativeModelConfig = Record<
  'vocabSize' | 'hiddenSize' | 'intermediateSize' | 'numLayers' | 'numHeads' | 'numKvHeads' | 'headDim' | 'maxPositions' | 'rmsNormEps'
  | 'ropeTheta',
  number
> & Record<'tieEmbeddings' | 'attentionBias' | 'qkNorm', boolean> & { ropeScaling: NativeRopeScaling };

/** grpo_model_config's rope_* fields (native/addon/model_addon.cc read_rope_scaling). */
export type NativeRopeScaling = { type: 'default' | 'linear' | 'yarn' | 'llama3'; truncate: boolean } & Record<
  'factor' | 'lowFreqFactor' | 'highFreqFactor' | 'originalMaxPositions' | 'betaFast' | 'betaSlow' | 'mscale' | 'mscaleAllDim' | 'attentionFactor',
  number
>;

/** grpo_adamw_options; maxGradNorm <= 0: no clipping. */
export interface NativeAdamwOptions {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  maxGradNorm: number;
}

/** The kernels both addons implement. */
export interface KernelBinding {
  logprobForward(
    logits: F32, targets: I32, vocab: number, options: NativeLogprobOptions, logp: F32, entropy: F32 | null, lse: F32 | null,
    async: boolean,
  ): Done;
  logprobBackward(
    logits: F32, targets: I32, vocab: number, options: NativeLogprobOptions, gradLogp: F32, gradEntropy: F32 | null,
    gradLogits: F32, async: boolean, savedLse?: F32 | null, savedEntropy?: F32 | null,
  ): Done;
  linearLogprobForward(
    hidden: F32, weight: F32, bias: F32 | null, targets: I32, hiddenSize: number, options: NativeLinearLogprobOptions,
    logp: F32, entropy: F32 | null, lse: F32 | null, async: boolean, keptLogits?: F32 | null,
  ): Done;
  linearLogprobBackward(
    hidden: F32, weight: F32, bias: F32 | null, targets: I32, hiddenSize: number, options: NativeLinearLogprobOptions,
    gradLogp: F32, gradEntropy: F32 | null, gradHidden: F32, gradWeight: F32, gradBias: F32 | null, accumulate: boolean,
    async: boolean, savedLse?: F32 | null, savedEntropy?: F32 | null, keptLogits?: F32 | null,
  ): Done;
  /** linearLogprobForward with hidden and weight as bfloat16 bit patterns. */
  linearLogprobForwardBf16(
    hidden: Uint16Array, weight: Uint16Array, bias: F32 | null, targets: I32, hiddenSize: number,
    options: NativeLinearLogprobOptions, logp: F32, entropy: F32 | null, lse: F32 | null, async: boolean,
    keptLogits?: F32 | null,
  ): Done;
  /** linearLogprobBackward with hidden and weight as bfloat16 bit patterns; the gradients are float32. */
  linearLogprobBackwardBf16(
    hidden: Uint16Array, weight: Uint16Array, bias: F32 | null, targets: I32, hiddenSize: number,
    options: NativeLinearLogprobOptions, gradLogp: F32, gradEntropy: F32 | null, gradHidden: F32, gradWeight: F32,
    gradBias: F32 | null, accumulate: boolean, async: boolean, savedLse?: F32 | null, savedEntropy?: F32 | null,
    keptLogits?: F32 | null,
  ): Done;
  groupAdvantages(
    rewards: F32, groupSize: number, groupIds: I32 | null, numGroups: number, options: NativeAdvantageOptions,
    advantages: F32, async: boolean,
  ): Returns<NativeAdvantageStats>;
  rankAdvantages(
    rewards: F32, groups: number, candidates: number, ranks: number, options: NativeAdvantageOptions, advantages: F32,
    async: boolean,
  ): Returns<NativeRankAdvantageStats>;
  scatterItemAdvantages(
    itemAdvantages: F32, segments: I32, mask: Uint8Array, eosPositions: I32, cols: number, ranks: number,
    shaping: NativeLengthShaping, out: F32, async: boolean,
  ): Done;
  broadcastAdvantages(
    advantages: F32, mask: Uint8Array, truncated: Uint8Array | null, prefixEnd: I32 | null, cols: number,
    options: { truncation: 'keep' | 'dropTruncated' | 'dropSuffix' }, out: F32, lossMask: Uint8Array, async: boolean,
  ): Done;
  /** advantages [B, T] or [B] (told apart by length). */
  policyLoss(
    logp: F32, oldLogp: F32 | null, refLogp: F32 | null, advantages: F32, mask: Uint8Array, segments: I32 | null,
    entropy: F32 | null, cols: number, options: NativeLossOptions, gradLogp: F32, async: boolean,
  ): Returns<NativeLossStats>;
  sample(
    logits: F32, vocab: number, params: NativeSamplingParams, tokens: I32, logp: F32 | null, logpRaw: F32 | null,
    async: boolean,
  ): Done;
  samplingProbs(logits: F32, vocab: number, params: NativeSamplingParams, probs: F32, async: boolean): Done;
}

/** The built-in model (native/addon/model_addon.cc); a policy calls it only on the addon that created its handle. */
export interface ModelBinding {
  modelCreate(config: NativeModelConfig): ModelHandle;
  modelInit(model: ModelHandle, seed: number, async: boolean): Done;
  modelClone(model: ModelHandle): ModelHandle;
  modelDispose(model: ModelHandle): void;
  modelTensors(model: ModelHandle): { name: string; shape: number[] }[];
  modelGetTensor(model: ModelHandle, name: string, out: F32): void;
  modelSetTensor(model: ModelHandle, name: string, values: F32): void;
  modelScore(
    model: ModelHandle, tokens: I32, offsets: F64, targets: I32, options: NativeLogprobOptions, train: boolean, logp: F32,
    entropy: F32 | null, async: boolean,
  ): Done;
  modelLogits(model: ModelHandle, tokens: I32, offsets: F64, logits: F32, async: boolean): Done;
  modelBackward(model: ModelHandle, gradLogp: F32, gradEntropy: F32 | null, async: boolean): Done;
  modelSetBf16Matmuls(model: ModelHandle, enabled: boolean): void;
  modelZeroGrad(model: ModelHandle): void;
  modelAdamw(model: ModelHandle, options: NativeAdamwOptions, gradNorm: F32, async: boolean): Done;
  modelGetOptimizer(model: ModelHandle, m: F32, v: F32): number;
  modelSetOptimizer(model: ModelHandle, m: F32, v: F32, step: number): void;
  modelGenerate(
    model: ModelHandle, prompts: I32, offsets: F64, options: NativeGenerateOptions, outTokens: I32, outLogp: F32, outLengths: F64,
    truncated: Uint8Array, async: boolean,
  ): Done;
}

/** A model addon that may also have the LoRA and recomputation methods (only the CPU one does). */
export type ModelBindingWithLora = ModelBinding & Partial<LoraBinding> & Partial<RecomputeBinding>;

/** grpo_lora_config (native/include/grpo/model.h): targets are grpo_lora_module bits, in LORA_TARGET_MODULES order. */
export interface NativeLoraConfig {
  rank: number;
  scale: number;
  dropout: number;
  targets: number;
  seed: number;
  /** The type the frozen base's layer matrices are kept in: a grpo_base16 (0 float32, 1 bfloat16, 2 float16). */
  base16: number;
}

/** The built-in model's LoRA adapters (native/addon/lora_addon.cc): the CPU addon has them, the CUDA one does not. */
export interface LoraBinding {
  modelLoraAttach(model: ModelHandle, lora: NativeLoraConfig): void;
  modelLoraSetEnabled(model: ModelHandle, enabled: boolean): void;
  modelLoraParameterCount(model: ModelHandle): number;
  modelLoraGetOptimizer(model: ModelHandle, m: F32, v: F32): number;
  modelLoraSetOptimizer(model: ModelHandle, m: F32, v: F32, step: number): void;
}

/** Per-layer activation recomputation of training scores (native/addon/recompute_addon.cc): the CPU addon only. */
export interface RecomputeBinding {
  modelSetRecompute(model: ModelHandle, enabled: boolean): void;
}

/**
 * Every method of the built-in model's ABI (native/include/grpo/model.h). An addon runs the model only when it has
 * all of them.
 */
export const MODEL_METHODS = Object.freeze([
  'modelCreate', 'modelInit', 'modelClone', 'modelDispose', 'modelTensors', 'modelGetTensor', 'modelSetTensor', 'modelScore',
  'modelLogits', 'modelBackward', 'modelSetBf16Matmuls', 'modelZeroGrad', 'modelAdamw', 'modelGetOptimizer', 'modelSetOptimizer',
  'modelGenerate',
] as const satisfies readonly (keyof ModelBinding)[]);

export type ModelMethod = (typeof MODEL_METHODS)[number];

/** The CPU addon (grpo_native.node). */
export interface NativeBinding extends KernelBinding, ModelBinding, LoraBinding, RecomputeBinding {
  setThreads(threads: number): void;
  getThreads(): number;
  cpuPath(): 'avx512' | 'avx2' | 'generic';
  /** Seconds to stream `data` once through the pool (memory-read roof probe). */
  probeRead(data: F32): number;
  /** FMA roof probe: 12 independent FMA chains per thread for `iterations` rounds. */
  probeFma(iterations: number): { seconds: number; flops: number };
  gemm(a: F32, b: F32, c: F32, layout: NativeGemmLayout, async: boolean): Done;
  /** gemm with bfloat16-rounded inputs where the CPU has AVX512_BF16 (AMX-BF16 tiles where it has those too). */
  gemmBf16: NativeBinding['gemm'];
  gemmBf16Native(): boolean;
  /** The kernel gemmBf16 runs: 'amx_bf16', 'avx512_bf16', or the float32 path's name where it is not native. */
  gemmBf16Kernel(): MatmulBf16Kernel;
}

/** The kernel methods the CUDA addon implements, with the CPU addon's signatures. */
export type CudaKernel = keyof KernelBinding;

/** cudaProbe(): error is the cudaError (35 = no or too old driver, 100 = no device), 0 when ok. */
export interface CudaProbe {
  ok: boolean;
  deviceCount: number;
  error: number;
  message: string;
}

/** The CUDA addon (grpo_native_cuda.node). The model methods are optional: an addon built before the model's CUDA port lacks them. */
export type CudaBinding = KernelBinding & Partial<ModelBinding> & {
  cudaProbe(): CudaProbe;
  /** GPU milliseconds of the last kernel call's kernels (input and output copies excluded). */
  cudaLastKernelMs(): number;
};

export interface CudaLoad {
  /** The CUDA addon with a usable device, or null. */
  binding: CudaBinding | null;
  /** Which file was used and the device found, or why CUDA is unavailable. */
  reason: string;
}
