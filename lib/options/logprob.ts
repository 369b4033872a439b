// The options of logprobs, linearLogprobs and their backwards (lib/kernels/logprob.ts), declared once.
import { boolean, choice, device, integer, number, opaque, POSITIVE, type OptionsOf } from './schema.js';

/** Storage of `hidden` and `weight`: float32 (Float32Array) or bfloat16 bit patterns (Uint16Array, see toBf16). */
export const LINEAR_DTYPES = ['f32', 'bf16'] as const;
export type LinearDtype = (typeof LINEAR_DTYPES)[number];

export const LOGPROB_OPTIONS = {
  temperature: number(1, 'Logits are divided by it before the softmax (TRL semantics).', POSITIVE),
  entropy: boolean(false, 'Also return the entropy of each row\'s distribution.'),
  ignoreIndex: integer(-100, 'Target value meaning "no token": logp = entropy = 0 and zero gradient.', -(2 ** 31), 2 ** 31 - 1),
  device: device(),
  lse: boolean(false, 'Forward: also return `lse` [T], the log-sum-exp of each row of logits / temperature (0 on ignored rows), '
    + 'for the backward\'s `saved`.'),
};

/** The forward's per-row results that a backward can reuse. */
export interface SavedLogprobStats {
  /** lse [T], from the forward with `lse: true` */
  lse: Float32Array;
  /** entropy [T], from the forward with `entropy: true`; needed with gradEntropy */
  entropy?: Float32Array;
}

/** The fused LM head's forward results that its backward can reuse: also the logits, with `keepLogits`. */
export interface SavedLinearLogprobStats extends SavedLogprobStats {
  /** logits [T, V], from the forward with `keepLogits: true` */
  logits?: Float32Array;
}

const gradEntropy = opaque<Float32Array>('Float32Array [T]', 'Upstream gradient of the entropy.');

export const LOGPROB_BACKWARD_OPTIONS = {
  ...LOGPROB_OPTIONS,
  gradEntropy,
  out: opaque<Float32Array>('Float32Array [T, V]', 'Where to write gradLogits; may be `logits` itself (in-place).', 'a new array'),
  saved: opaque<SavedLogprobStats>('{ lse, entropy? }', 'Backward: the forward\'s result on the same logits, targets and options, '
    + 'with `lse` (and `entropy` when gradEntropy is given). The backward then reads each row once, its softmax from lse, instead of '
    + 'first recomputing the row\'s statistics; the gradients agree to float32 rounding, not bit for bit.'),
};

export const LINEAR_LOGPROB_OPTIONS = {
  ...LOGPROB_OPTIONS,
  dtype: choice(LINEAR_DTYPES, 'f32', '"bf16": hidden and weight are Uint16Arrays of bfloat16 bits; the products are exact in float32 '
    + 'and summed in float32; outputs and gradients stay float32 (the backward rounds each gradient tile to bf16 before it is '
    + 'multiplied out, as a bf16 tensor-core GEMM does).'),
  bias: opaque<Float32Array>('Float32Array [V]', 'LM-head bias, float32 for either dtype.'),
  chunkSize: integer(512, 'Rows per tile (CPU; the GPU uses tiles of up to 4096 rows); the CPU workspace is chunkSize × chunkVocab floats.', 1),
  chunkVocab: integer(2048, 'Vocabulary entries per tile.', 1),
  keepLogits: boolean(false, 'Forward: also return `logits` [T, V] (hidden · weightᵀ + bias, before the temperature) for the '
    + 'backward\'s `saved`, which then reads each tile instead of recomputing it: 2 matrix products per tile instead of 3, the '
    + 'same gradients bit for bit. Costs T × V × 4 bytes (268 MB at 2048 × 32768) that the fused forward otherwise never holds. '
    + 'CPU only: the GPU recomputes a tile faster than it could move the logits (GRPO_UNSUPPORTED there).'),
  logitsOut: opaque<Float32Array>('Float32Array [T, V]', 'With keepLogits: where to write the logits (reused across calls).',
    'a new array'),
};

export const LINEAR_LOGPROB_BACKWARD_OPTIONS = {
  ...LINEAR_LOGPROB_OPTIONS,
  gradEntropy,
  accumulate: boolean(false, 'Add into the provided gradient buffers instead of overwriting them.'),
  saved: opaque<SavedLinearLogprobStats>('{ lse, entropy?, logits? }', 'Backward: the forward\'s result on the same inputs and '
    + 'options, with `lse` (and `entropy` when gradEntropy is given). The CPU backward then reuses them instead of recomputing every '
    + 'logits tile for its row statistics (3 matrix products per tile instead of 4); the gradients agree to float32 rounding, not '
    + 'bit for bit. With `logits` (the forward\'s `keepLogits`) it also reads each tile instead of recomputing it (2 products, '
    + 'the same bits as without them); NaN or +Infinity in a counted row of them is GRPO_NON_FINITE.'),
  gradHidden: opaque<Float32Array>('Float32Array [T, H]', 'Caller-provided gradHidden.', 'a new array'),
  gradWeight: opaque<Float32Array>('Float32Array [V, H]', 'Caller-provided gradWeight.', 'a new array'),
  gradBias: opaque<Float32Array>('Float32Array [V]', 'Caller-provided gradBias (only with `bias`).', 'a new array'),
};

export type LogprobOptions = OptionsOf<typeof LOGPROB_OPTIONS>;
export type LogprobBackwardOptions = OptionsOf<typeof LOGPROB_BACKWARD_OPTIONS>;
export type LinearLogprobOptions = OptionsOf<typeof LINEAR_LOGPROB_OPTIONS>;
export type LinearLogprobBackwardOptions = OptionsOf<typeof LINEAR_LOGPROB_BACKWARD_OPTIONS>;
