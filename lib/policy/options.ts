// The options of the built-in policy's optimizer and of Policy.generate, declared once.
import { SAMPLING_OPTIONS } from '../options/sampling.js';
import * as opt from '../options/schema.js';

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

const { history: _history, step: _step, ...GENERATE_SAMPLER_OPTIONS } = SAMPLING_OPTIONS;

/** Every option of generate: the sampler's (but its history and step, which decoding sets) and the stopping rules. */
export const GENERATE_OPTIONS = { ...GENERATE_SAMPLER_OPTIONS, ...GENERATE_STOP_OPTIONS };

export type GenerateOptions = opt.OptionsOf<typeof GENERATE_OPTIONS>;
export const GENERATE_DEFAULTS = opt.defaultsOf(GENERATE_STOP_OPTIONS);
