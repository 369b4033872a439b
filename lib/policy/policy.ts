// The Policy interface: what a trainer needs from a language model. The built-in model
// (builtin.ts) implements it; a remote inference server can implement it the same way.
import type { ResolvedDevice } from '../binding/index.js';
import type { SamplingOptions } from '../kernels/sampling-params.js';
import type { ModelConfig } from './config.js';
import type { Tokenizer } from './tokenizer.js';

/** Prompts and completions as token ids; completion i follows prompt i. */
export interface SequenceBatch {
  prompts: readonly ArrayLike<number>[];
  completions: readonly ArrayLike<number>[];
}

/** Options of {@link Policy.score}. */
export interface ScoreOptions {
  /** Logits are divided by it before the softmax. @defaultValue 1 */
  temperature?: number;
  /** Called with the fraction done of long calls. @defaultValue none */
  onProgress?: (fraction: number) => void;
}

/** Per completion token: logp [completion length] and entropy [completion length]. */
export interface ScoreResult {
  logp: Float32Array[];
  entropy: Float32Array[];
}

/** What a loss returns: its value and d(loss)/d(logp) (and optionally d/d(entropy)) per completion token. */
export interface LossOutput {
  loss: number;
  gradLogp: Float32Array[];
  gradEntropy?: Float32Array[];
}

/** A loss over the scores of one batch (e.g. the GRPO policy loss, or {@link sftLoss}). */
export type LossFunction = (scores: ScoreResult, batch: SequenceBatch) => LossOutput;

/** Options of {@link Policy.step}. */
export interface StepOptions extends ScoreOptions {
  /** Learning rate of this step (overrides the schedule). @defaultValue the policy's schedule */
  learningRate?: number;
}

export interface StepResult {
  loss: number;
  /** Global L2 norm of the gradients before clipping. */
  gradNorm: number;
  learningRate: number;
  /** Optimizer steps taken so far, this one included. */
  step: number;
}

/**
 * Options of {@link Policy.generate}: the sampler's options (temperature, topK, topP, minP, penalties,
 * allow/deny masks per row, seed; see docs/sampling.md) plus the stopping rules. Penalties see each
 * row's prompt and completion so far; the sampler's step is the decoding step.
 */
export interface GenerateOptions extends Omit<SamplingOptions, 'history' | 'step'> {
  /** @defaultValue 64 */
  maxNewTokens?: number;
  /** A completion ends after any of these tokens (kept in the output). @defaultValue the tokenizer's EOS, if any */
  stopTokens?: readonly number[];
  /** A completion ends at the first of these strings (cut after it); needs a tokenizer. @defaultValue none */
  stopStrings?: readonly string[];
}

export interface Generation {
  tokens: Int32Array;
  /** Log-prob of each sampled token under the penalised, temperature-scaled distribution before top-k/p/min-p (log-softmax of the logits for greedy rows). */
  logp: Float32Array;
  /** The decoded completion, when the policy has a tokenizer. */
  text?: string;
  /** True when the completion hit maxNewTokens (or the context) before a stop token or string. */
  truncated: boolean;
}

export interface Policy {
  readonly config: ModelConfig;
  readonly tokenizer: Tokenizer | undefined;
  /** Where the model runs ('cpu' or 'cuda'), when the policy knows; the trainer logs it. */
  readonly device?: ResolvedDevice;
  parameterCount(): number;
  /** Completions of each prompt (token ids, or text when the policy has a tokenizer). */
  generate(prompts: readonly (ArrayLike<number> | string)[], options?: GenerateOptions): Promise<Generation[]>;
  score(batch: SequenceBatch, options?: ScoreOptions): Promise<ScoreResult>;
  /** Scores the batch, takes the loss's gradient back through the model and applies one optimizer step. */
  step(batch: SequenceBatch, loss: LossFunction, options?: StepOptions): Promise<StepResult>;
  /** A frozen copy (for reference log-probs under KL): it scores and generates but never trains. */
  clone(): Promise<Policy>;
  /** Writes a Hugging Face-style checkpoint folder atomically. */
  save(dir: string): Promise<void>;
  /** Frees native memory now; the policy is unusable afterwards. */
  dispose(): void;
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
