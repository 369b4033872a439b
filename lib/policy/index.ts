// The policy layer: the Policy interface, the built-in Llama/Qwen-family model, tokenizer, checkpoints.
export type {
  Policy, TrainablePolicy, SequenceBatch, ScoreOptions, ForwardOptions, ScoreResult, Forward, ForwardHandle, LossGradient, LossOutput, LossFunction,
  OptimizerStepOptions, OptimizerStepResult, StepOptions, StepResult, GenerateOptions, Generation, PolicyAdapters,
} from './policy.js';
export { policyStep, sftLoss } from './policy.js';
export type { BaseDtype } from './base-dtype.js';
export { BuiltinPolicy, OPTIMIZER_DEFAULTS, scheduledLearningRate, type BuiltinOptions, type CloneOptions, type OptimizerOptions } from './builtin.js';
export { GENERATE_DEFAULTS } from './generate.js';
export { configFromHf, configToHf, checkConfig, SUPPORTED_ARCHITECTURES, type ModelConfig, type RopeScaling, type SupportedArchitecture } from './config.js';
export { generationDefaults, type GenerationDefaults } from './generation-config.js';
export { Tokenizer, type ChatMessage, type ChatTemplateOptions, type Encoded } from './tokenizer.js';
export { trainBpe, BPE_DEFAULTS, type BpeTrainOptions, type TrainedTokenizer } from './bpe-train.js';
export { readSafetensors, writeSafetensors, readModelWeights, writeModelWeights, type NamedTensor } from './safetensors.js';
export { saveCheckpoint, loadCheckpoint, type CheckpointContents, type LoadedCheckpoint, type OptimizerState } from './checkpoint.js';
export { LORA_DEFAULTS, LORA_OPTIONS, LORA_TARGET_MODULES, loraScale, type LoraOptions, type LoraSettings, type LoraTargetModule } from '../options/lora.js';
export { loadAdapter, loraTensorShapes, saveAdapter, type LoraAdapter } from './lora-format.js';
export { mergeAdapter, type MergeOptions, type MergeResult } from './lora-merge.js';
export { isAdapterFolder, loadLoraCheckpoint, saveLoraCheckpoint, type LoraCheckpoint } from './lora-checkpoint.js';
