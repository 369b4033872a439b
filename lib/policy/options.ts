// The options of the built-in policy's optimizer and of Policy.generate, declared once.
import type { LoraStartOptions } from '../options/lora.js';
import { SAMPLING_OPTIONS } from '../options/sampling.js';
import * as opt from '../options/schema.js';
import type { Tokenizer } from './tokenizer.js';

/** AdamW settings and the learning-rate schedule (linear warmup, then cosine decay to minLearningRate). */
export const OPTIMIZER_OPTIONS = {
  learningRate: opt.number(1e-3, 'Peak learning rate.'),
  beta1: opt.number(0.9, 'AdamW first-moment decay.', opt.UNIT),
  beta2: opt.number(0.999, 'AdamW second-moment decay.', opt.UNIT),
  eps: opt.number(1e-8, 'AdamW epsilon.', opt.POSITIVE),
  weightDecay: opt.number(0.01, 'Decoupled decay of weight matrices and embeddings (not norms or biases).'),
  maxGradNorm: opt.number(1, 'Clip the global gradient norm to this; 0 = off.'),
  warmupSteps: opt.integer(0, 'Steps of the linear warmup.', 0),
  decaySteps: opt.integer(0, 'Steps of the cosine decay after warmup; 0 = constant rate.', 0),
  minLearningRate: opt.number(0, 'Learning rate at the end of the decay.'),
};

export type OptimizerOptions = opt.OptionsOf<typeof OPTIMIZER_OPTIONS>;
export const OPTIMIZER_DEFAULTS = opt.defaultsOf(OPTIMIZER_OPTIONS);

/** The stopping rules of generate (its sampler options are SAMPLING_OPTIONS, docs/sampling.md). */
export const GENERATE_STOP_OPTIONS = {
  maxNewTokens: opt.integer(64, 'Completion cap; a completion that reaches it (or the context) has `truncated: true`.', 0, 1 << 24),
  stopTokens: opt.opaque<readonly number[]>('token ids', 'A completion ends after any of these tokens (kept in the output).', 'the tokenizer\'s EOS, if any'),
  stopStrings: opt.opaque<readonly string[]>('strings', 'A completion ends at the first of these strings (cut after it); needs a tokenizer.'),
};

/** How generate splits its rows into native calls: the KV cache holds one call's rows at a time. */
export const GENERATE_BATCH_OPTIONS = {
  maxRows: opt.integer(0, 'Rows (prompts) per native generate call, run one after another; 0 = all in one call. Every row gets '
    + 'the same tokens and log-probs as in one call (a row draws with its index in the whole batch), while the KV cache holds '
    + 'only maxRows rows (docs/trainer.md, "Generation in row chunks").', 0),
};

const { history: _history, step: _step, ...GENERATE_SAMPLER_OPTIONS } = SAMPLING_OPTIONS;

/** The options generate adds to the sampler's: the stopping rules and the row chunking (docs/policy.md's table). */
export const GENERATE_OWN_OPTIONS = { ...GENERATE_STOP_OPTIONS, ...GENERATE_BATCH_OPTIONS };

/** Every option of generate: the sampler's (but its history and step, which decoding sets) and its own. */
export const GENERATE_OPTIONS = { ...GENERATE_SAMPLER_OPTIONS, ...GENERATE_OWN_OPTIONS };

export type GenerateOptions = opt.OptionsOf<typeof GENERATE_OPTIONS>;
export const GENERATE_DEFAULTS = opt.defaultsOf(GENERATE_OWN_OPTIONS);

/** Error names of a policy call's options: `score temperature`, `score options`. */
export function callNaming(call: string): opt.Naming {
  return { field: (path) => `${call} ${path}`, object: (path) => (path ? `${call} options ${path}` : `${call} options`) };
}

/** Options of score and forward (and the scoring half of step). */
export const SCORE_OPTIONS = {
  temperature: opt.number(1, 'Logits are divided by it before the softmax.', opt.POSITIVE),
  onProgress: opt.callback<((fraction: number) => void) | undefined>(undefined, '(fraction: number) => void', 'Called with the fraction done of long calls.', 'none'),
};

/** Options of optimizerStep. */
export const OPTIMIZER_STEP_OPTIONS = {
  learningRate: opt.number(undefined, 'Learning rate of this step (overrides the schedule).', opt.NON_NEGATIVE, { defaultDoc: 'the policy\'s schedule' }),
};

/** Options of forward: the score's, and how the activations for its backward are kept. */
export const FORWARD_OPTIONS = {
  ...SCORE_OPTIONS,
  recompute: opt.boolean(false, 'Keep only each decoder layer\'s input for the backward, which recomputes the layer\'s activations '
    + 'from it, layer by layer (the CPU built-in model; GRPO_UNSUPPORTED on CUDA): less memory for about one more forward of '
    + 'compute, and bitwise the same gradients (docs/trainer.md, "Per-layer activation recomputation").'),
};

/** Options of step: the forward's, the optimizer step's, and progress (0.5 forward, 0.9 backward, 1 optimizer). */
export const STEP_OPTIONS = { ...FORWARD_OPTIONS, ...OPTIMIZER_STEP_OPTIONS };

/** Options of BuiltinPolicy.clone. */
export const CLONE_OPTIONS = {
  device: { ...opt.device(' to copy onto'), doc: 'Device of the copy (its weights travel through host memory when it differs).', defaultDoc: 'the source\'s device' },
};

/** Options of BuiltinPolicy.create, createAsync and load (load ignores the seed). */
export const BUILTIN_OPTIONS = {
  seed: opt.integer(0, 'Initialisation seed; with `lora`, also the seed of the adapters\' A and dropout masks (load uses it for that alone).', 0),
  tokenizer: opt.opaque<Tokenizer>('Tokenizer', 'The tokenizer of generate and save (its vocabulary must fit config.vocabSize).', 'none (load: the checkpoint\'s)'),
  optimizer: opt.opaque<OptimizerOptions>('object', 'AdamW settings and learning-rate schedule (OPTIMIZER_OPTIONS: the optimizer table).', 'OPTIMIZER_DEFAULTS'),
  bf16Matmuls: opt.boolean(false, 'Multiply the dense layers (q/k/v/o projections, MLP) in bfloat16 with float32 sums where the CPU has AVX512_BF16: on AMX-BF16 tiles where it has those too (a training step 1.5× as fast as float32 on the Xeon of docs/performance.md#amx), else with vdpbf16ps (`matmulBf16Kernel()` names which). Attention and the LM head stay float32.'),
  lora: opt.opaque<LoraStartOptions>('object', 'LoRA adapters on the decoder layers (the `lora` table: rank, alpha, dropout, targetModules, rslora, and for load `from`, an adapter folder to start from); then only the adapters train (docs/policy.md, "LoRA adapters"). Load of an adapter folder takes the adapter\'s own settings.', 'none: full fine-tuning'),
  device: { ...opt.device(), doc: 'Where the model lives: "cpu", "cuda" (GRPO_CUDA_UNAVAILABLE when CUDA cannot run here) or "auto" (CUDA when available). The GPU model is unverified, hence the default.' },
};

export type ScoreOptions = opt.OptionsOf<typeof SCORE_OPTIONS>;
export type ForwardOptions = opt.OptionsOf<typeof FORWARD_OPTIONS>;
export type OptimizerStepOptions = opt.OptionsOf<typeof OPTIMIZER_STEP_OPTIONS>;
export type StepOptions = opt.OptionsOf<typeof STEP_OPTIONS>;
export type CloneOptions = opt.OptionsOf<typeof CLONE_OPTIONS>;
export type BuiltinOptions = opt.OptionsOf<typeof BUILTIN_OPTIONS>;
