// The Policy interface: what a trainer needs from a language model. The built-in model
// (builtin.ts) implements it; a remote inference server can implement it the same way. A training update
// is three calls in sequence (forward → the trainer's loss → backward → optimizerStep); policyStep chains them.
import type { ResolvedDevice } from '../binding/index.js';
import type { LoraSettings } from '../options/lora.js';
import { checkOptions } from '../options/schema.js';
import type { BaseDtype } from './base-dtype.js';
import type { ModelConfig } from './config.js';
import {
  callNaming, STEP_OPTIONS, type ForwardOptions, type GenerateOptions, type OptimizerStepOptions, type ScoreOptions, type StepOptions,
} from './options.js';
import type { Tokenizer } from './tokenizer.js';

/** Prompts and completions as token ids; completion i follows prompt i. */
export interface SequenceBatch {
  prompts: readonly ArrayLike<number>[];
  completions: readonly ArrayLike<number>[];
}

/** Options of {@link Policy.score}: SCORE_OPTIONS (lib/policy/options.ts). */
export type { ScoreOptions };
/** Options of {@link Policy.forward}: FORWARD_OPTIONS, the score's and `recompute`. */
export type { ForwardOptions };

/** Per completion token: logp [completion length] and entropy [completion length]. */
export interface ScoreResult {
  logp: Float32Array[];
  entropy: Float32Array[];
}

/** d(loss)/d(logp) (and optionally d/d(entropy)) per completion token [completion length]: what {@link Policy.backward} takes. */
export interface LossGradient {
  gradLogp: Float32Array[];
  gradEntropy?: Float32Array[];
}

/** What a loss returns: its value and its gradient. */
export interface LossOutput extends LossGradient {
  loss: number;
}

/**
 * Opaque token of one training forward. It is valid for one {@link Policy.backward} until the next forward or
 * score on the same policy, or its dispose(); a stale handle is a typed error (GRPO_INVALID_ARGUMENT).
 */
export type ForwardHandle = { readonly __forward: unique symbol };

/** What {@link Policy.forward} returns: the scores the loss reads and the handle its backward takes. */
export interface Forward {
  scores: ScoreResult;
  handle: ForwardHandle;
}

/** Options of {@link Policy.optimizerStep}: OPTIMIZER_STEP_OPTIONS. */
export type { OptimizerStepOptions };

export interface OptimizerStepResult {
  /** Global L2 norm of the gradients before clipping. */
  gradNorm: number;
  learningRate: number;
  /** Optimizer steps taken so far, this one included. */
  step: number;
}

/** A loss over the scores of one batch (e.g. the GRPO policy loss, or {@link sftLoss}). */
export type LossFunction = (scores: ScoreResult, batch: SequenceBatch) => LossOutput;

/** Options of {@link policyStep}: STEP_OPTIONS (the forward's, the optimizer step's, and progress). */
export type { StepOptions };

export interface StepResult extends OptimizerStepResult {
  loss: number;
}

/**
 * Options of {@link Policy.generate}: the sampler's options (temperature, topK, topP, minP, penalties,
 * allow/deny masks per row, seed; see docs/sampling.md) plus the stopping rules and the rows per native call
 * (GENERATE_OWN_OPTIONS). Penalties see each row's prompt and completion so far; the sampler's step is the decoding step.
 */
export type { GenerateOptions };

export interface Generation {
  tokens: Int32Array;
  /** Log-prob of each sampled token under the penalised, temperature-scaled distribution before top-k/p/min-p (log-softmax of the logits for greedy rows). */
  logp: Float32Array;
  /** The decoded completion, when the policy has a tokenizer. */
  text?: string;
  /** True when the completion hit maxNewTokens (or the context) before a stop token or string. */
  truncated: boolean;
}

/** A policy's LoRA adapters over its frozen base (docs/policy.md, "LoRA adapters"). */
export interface PolicyAdapters {
  readonly settings: LoraSettings;
  /** The Hugging Face folder that saves name as the adapter's base (base_model_name_or_path); undefined until known. */
  readonly baseFolder: string | undefined;
  /**
   * The type the base's decoder-layer matrices are kept in: 'bf16' or 'f16' when a loaded checkpoint's values all fit
   * it (a bfloat16 or float16 checkpoint's: half the memory, widened exactly to float32 where used), else 'f32'.
   */
  readonly baseDtype: BaseDtype;
  /** @deprecated baseDtype === 'bf16'. */
  readonly baseBf16: boolean;
  /** The frozen base: this policy with its adapters switched off, sharing its memory (no second copy); the KL reference. */
  base(): Policy;
  /** Writes the frozen base as a full Hugging Face folder and names it as the base of later saves. */
  saveBase(dir: string): Promise<void>;
}

/** A LoRA policy whose base exists only in memory writes it to `dir` (once), so that its adapter saves can name it. */
export async function ensureAdapterBase(policy: Policy, dir: string): Promise<void> {
  if (policy.adapters && policy.adapters.baseFolder === undefined) await policy.adapters.saveBase(dir);
}

export interface Policy {
  readonly config: ModelConfig;
  readonly tokenizer: Tokenizer | undefined;
  /** Where the model runs ('cpu' or 'cuda'), when the policy knows; the trainer logs it. */
  readonly device?: ResolvedDevice;
  /** Present when the policy trains LoRA adapters (then only they train, and save writes the adapter alone). */
  readonly adapters?: PolicyAdapters;
  parameterCount(): number;
  /** Completions of each prompt (token ids, or text when the policy has a tokenizer). */
  generate(prompts: readonly (ArrayLike<number> | string)[], options?: GenerateOptions): Promise<Generation[]>;
  score(batch: SequenceBatch, options?: ScoreOptions): Promise<ScoreResult>;
  /** Scores the batch as {@link score} does and keeps what its backward needs (a frozen policy refuses: GRPO_UNSUPPORTED). */
  forward(batch: SequenceBatch, options?: ForwardOptions): Promise<Forward>;
  /** Takes the loss's gradient back through the model; gradients add up until the next {@link optimizerStep}. */
  backward(handle: ForwardHandle, gradient: LossGradient): Promise<void>;
  /** One optimizer step over the gradients of the backward calls since the last one, then clears them. */
  optimizerStep(options?: OptimizerStepOptions): Promise<OptimizerStepResult>;
  /** A frozen copy (for reference log-probs under KL): it scores and generates but never trains. */
  clone(): Promise<Policy>;
  /** Writes a Hugging Face-style checkpoint folder atomically. */
  save(dir: string): Promise<void>;
  /** Frees native memory now; the policy is unusable afterwards. */
  dispose(): void;
}

/** The three training calls of a policy, which {@link policyStep} chains. */
export type TrainablePolicy = Pick<Policy, 'forward' | 'backward' | 'optimizerStep'>;

/**
 * One training update: forward, `loss` over its scores, backward, optimizer step. `options.onProgress` hears 0.5,
 * 0.9 and 1 after each of the three calls.
 */
export async function policyStep(policy: TrainablePolicy, batch: SequenceBatch, loss: LossFunction, options: StepOptions = {}): Promise<StepResult> {
  const { onProgress, learningRate, ...scoring } = checkOptions(STEP_OPTIONS, callNaming('step'), options, {});
  const { scores, handle } = await policy.forward(batch, scoring);
  onProgress?.(0.5);
  const out = loss(scores, batch);
  await policy.backward(handle, out);
  onProgress?.(0.9);
  const result = await policy.optimizerStep({ learningRate });
  onProgress?.(1);
  return { loss: out.loss, ...result };
}

/**
 * Supervised fine-tuning loss: mean negative log-likelihood of the completion tokens,
 * optionally weighted per token (weights [completion length] per sequence).
 */
export function sftLoss(weights?: readonly Float32Array[]): LossFunction {
  return (scores) => {
    let total = 0;
    let sum = 0;
    scores.logp.forEach((lp, i) => lp.forEach((_, t) => (total += weights ? weights[i][t] : 1)));
    const gradLogp = scores.logp.map((lp, i) => lp.map((value, t) => {
      const w = (weights ? weights[i][t] : 1) / Math.max(total, 1e-12);
      sum -= w * value;
      return -w;
    }));
    return { loss: sum, gradLogp };
  };
}
