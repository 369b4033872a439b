// Batched sampling from logits [B, V]: penalties, temperature, top-k, top-p, min-p and allow/deny
// masks, without sorting the vocabulary; seeded by (seed, row, step). docs/sampling.md has the
// processing order, the tie rules and the draw, which the CUDA version reproduces.
import { kernelBinding, type Device } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import * as check from '../validate.js';
import { callAsync, callSync, rejectOnThrow } from './native-call.js';
import { nativeSamplingParams, type SamplingOptions } from './sampling-params.js';

export interface SampleResult {
  /** tokens [B]: the drawn id of each row */
  tokens: Int32Array;
  /** logp [B]: log-probability of the token under the processed distribution (after top-k, top-p, min-p); 0 for greedy rows */
  logp: Float32Array;
  /** logpRaw [B]: log-probability under softmax(penalised, masked logits / temperature), before truncation; 0 for greedy rows */
  logpRaw: Float32Array;
}

/** {@link SamplingOptions} plus where to run. */
export interface SampleCallOptions extends SamplingOptions {
  /** 'cpu', 'cuda' (GRPO_CUDA_UNAVAILABLE without a usable GPU; the same draws as the CPU) or 'auto' (CUDA when available). @defaultValue 'cpu' */
  device?: Device;
}

type NativeCall = (async: boolean) => Promise<void> | undefined;
type Backend = ReturnType<typeof kernelBinding>;

/** Separates `device` from the sampler's options; anything that is not an options object is left to their validation. */
function splitDevice(options: SampleCallOptions | undefined): { device?: Device; sampling?: SamplingOptions } {
  if (typeof options !== 'object' || options === null) return { sampling: options };
  const { device, ...sampling } = options;
  return { device, sampling };
}

/** Validates a call on logits [B, V] and returns the native call with the result it fills. */
function prepare<T>(fn: string, logits: unknown, vocab: unknown, options: SampleCallOptions | undefined,
  bind: (l: Float32Array, params: ReturnType<typeof nativeSamplingParams>, rows: number, backend: Backend) => { call: NativeCall; result: T }) {
  const l = check.float32Array(`${fn} logits`, logits);
  const v = check.integer(`${fn} vocab`, vocab, 1, 2 ** 31 - 1);
  if (l.length % v !== 0) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${fn} logits of shape [B, V] with V = ${v}, but ${l.length} elements is not a multiple of ${v}`);
  }
  const rows = l.length / v;
  const { device, sampling } = splitDevice(options);
  return bind(l, nativeSamplingParams(fn, sampling, rows, v), rows, kernelBinding(fn, device, 'sample'));
}

function sampleCall(fn: string, logits: unknown, vocab: number, options?: SampleCallOptions) {
  return prepare(fn, logits, vocab, options, (l, params, rows, backend) => {
    const result: SampleResult = { tokens: new Int32Array(rows), logp: new Float32Array(rows), logpRaw: new Float32Array(rows) };
    return { call: (a: boolean) => backend.sample(l, vocab, params, result.tokens, result.logp, result.logpRaw, a), result };
  });
}

/**
 * Draws one token per row of `logits` [B, V], off the event loop. The same (logits, options) give the
 * same tokens on any thread count; advance `step` for every new draw with the same `seed`.
 * @param logits [B, V] float32; -Infinity marks a forbidden token; NaN / +Infinity are rejected (the row is named).
 * @param vocab V
 */
export function sample(logits: Float32Array, vocab: number, options?: SampleCallOptions): Promise<SampleResult> {
  return rejectOnThrow(() => {
    const { call, result } = sampleCall('sample', logits, vocab, options);
    return callAsync(call, () => result);
  });
}

/** Synchronous {@link sample}: blocks the calling thread; for small batches. */
export function sampleSync(logits: Float32Array, vocab: number, options?: SampleCallOptions): SampleResult {
  const { call, result } = sampleCall('sampleSync', logits, vocab, options);
  return callSync(call, () => result);
}

function probsCall(fn: string, logits: unknown, vocab: number, options?: SampleCallOptions) {
  return prepare(fn, logits, vocab, options, (l, params, _rows, backend) => {
    const probs = new Float32Array(l.length); // [B, V]
    return { call: (a: boolean) => backend.samplingProbs(l, vocab, params, probs, a), result: probs };
  });
}

/**
 * The processed distribution [B, V] that {@link sample} draws from with the same options (zero outside
 * the kept set; one-hot for greedy rows). For inspection and tests; sampling never materialises it.
 */
export function samplingProbs(logits: Float32Array, vocab: number, options?: SampleCallOptions): Promise<Float32Array> {
  return rejectOnThrow(() => {
    const { call, result } = probsCall('samplingProbs', logits, vocab, options);
    return callAsync(call, () => result);
  });
}

/** Synchronous {@link samplingProbs}. */
export function samplingProbsSync(logits: Float32Array, vocab: number, options?: SampleCallOptions): Float32Array {
  const { call, result } = probsCall('samplingProbsSync', logits, vocab, options);
  return callSync(call, () => result);
}
