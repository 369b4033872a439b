// Log-prob scoring: log-softmax(logits / temperature) gathered at targets, entropy, backward,
// and the fused LM-head form that never materialises [tokens × vocab] logits.
import { kernelBinding, type NativeLinearLogprobOptions, type NativeLogprobOptions } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import * as check from '../validate.js';
import {
  LINEAR_LOGPROB_BACKWARD_OPTIONS, LINEAR_LOGPROB_OPTIONS, LOGPROB_BACKWARD_OPTIONS, LOGPROB_OPTIONS,
  type LinearDtype, type LinearLogprobBackwardOptions, type LinearLogprobOptions, type LogprobBackwardOptions, type LogprobOptions,
  type SavedLinearLogprobStats,
} from '../options/logprob.js';
import { defaultsOf, kernelNaming, type Schema, type ValuesOf, checkOptions } from '../options/schema.js';
import { rejectOnThrow, runNative } from './native-call.js';

export {
  LINEAR_LOGPROB_BACKWARD_OPTIONS, LINEAR_LOGPROB_OPTIONS, LOGPROB_BACKWARD_OPTIONS, LOGPROB_OPTIONS,
  type LinearDtype, type LinearLogprobBackwardOptions, type LinearLogprobOptions, type LogprobBackwardOptions, type LogprobOptions,
  type SavedLinearLogprobStats, type SavedLogprobStats,
} from '../options/logprob.js';

/** The checked options every log-prob call shares. */
type Scalars = ValuesOf<typeof LOGPROB_OPTIONS>;

export interface LogprobResult {
  /** logp [T] */
  logp: Float32Array;
  /** entropy [T], when asked for */
  entropy?: Float32Array;
  /** lse [T], when asked for (`lse: true`) */
  lse?: Float32Array;
}

export interface LinearLogprobResult extends LogprobResult {
  /** logits [T, V] = hidden · weightᵀ + bias, when kept (`keepLogits: true`) */
  logits?: Float32Array;
}

export interface LinearLogprobGradients {
  /** gradHidden [T, H] */
  gradHidden: Float32Array;
  /** gradWeight [V, H] */
  gradWeight: Float32Array;
  /** gradBias [V], when a bias was given */
  gradBias?: Float32Array;
}

function checkTargets(name: string, targets: Int32Array, vocab: number, ignoreIndex: number): void {
  for (let t = 0; t < targets.length; t++) {
    const id = targets[t];
    if (id !== ignoreIndex && (id < 0 || id >= vocab)) {
      throw new GrpoError('GRPO_INDEX_RANGE', `Expected ${name}[${t}] in [0, ${vocab}) or ${ignoreIndex} but received ${id}`);
    }
  }
}

/** vocab = logits.length / T, which must divide exactly (T = targets.length). */
function vocabOf(logits: Float32Array, targets: Int32Array): number {
  const rows = targets.length;
  if (rows === 0) {
    if (logits.length !== 0) throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected empty logits for 0 targets but received ${logits.length} elements`);
    return 1;
  }
  if (logits.length === 0 || logits.length % rows !== 0) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH',
      `Expected logits of shape [T, V] with T = targets.length = ${rows}, but ${logits.length} elements is not a positive multiple of ${rows}`);
  }
  return logits.length / rows;
}

interface PlainCall {
  logits: Float32Array;
  targets: Int32Array;
  vocab: number;
  s: Scalars;
}

/** The resolved options of a schema, with their defaults. */
function resolve<S extends Schema>(schema: S, fn: string, options: object | undefined): ValuesOf<S> {
  return checkOptions(schema, kernelNaming(fn), options, defaultsOf(schema));
}

function plainCall(fn: string, logits: unknown, targets: unknown, options: object | undefined, schema: Schema): PlainCall {
  const s = resolve(schema as typeof LOGPROB_OPTIONS, fn, options);
  const l = check.float32Array(`${fn} logits`, logits);
  const t = check.int32Array(`${fn} targets`, targets);
  const vocab = vocabOf(l, t);
  checkTargets(`${fn} targets`, t, vocab, s.ignoreIndex);
  return { logits: l, targets: t, vocab, s };
}

/** The options as native/addon/logprob_addon.cc reads them (by field name). */
function nativeOptions(s: Scalars): NativeLogprobOptions {
  return { temperature: s.temperature, ignoreIndex: s.ignoreIndex };
}

function linearOptions(c: { s: Scalars; chunkSize: number; chunkVocab: number }): NativeLinearLogprobOptions {
  return { ...nativeOptions(c.s), chunkRows: c.chunkSize, chunkVocab: c.chunkVocab };
}

function forward(async: boolean, logits: unknown, targets: unknown, options?: LogprobOptions) {
  const c = plainCall('logprobs', logits, targets, options, LOGPROB_OPTIONS);
  const rows = c.targets.length;
  const logp = new Float32Array(rows); // [T]
  const entropy = c.s.entropy ? new Float32Array(rows) : null; // [T]
  const lse = c.s.lse ? new Float32Array(rows) : null; // [T]
  const backend = kernelBinding('logprobs', options?.device, 'logprobForward');
  return runNative(async,
    (a) => backend.logprobForward(c.logits, c.targets, c.vocab, nativeOptions(c.s), logp, entropy, lse, a),
    (): LogprobResult => ({ logp, ...(entropy && { entropy }), ...(lse && { lse }) }));
}

/**
 * Log-probabilities of `targets` under softmax(logits / temperature), computed off the event loop.
 * @param logits [T, V] float32; -Infinity marks a masked token; NaN / +Infinity are rejected.
 * @param targets [T] token ids in [0, V), or `ignoreIndex`.
 */
export function logprobs(logits: Float32Array, targets: Int32Array, options?: LogprobOptions): Promise<LogprobResult> {
  return rejectOnThrow(() => forward(true, logits, targets, options) as Promise<LogprobResult>);
}

/** Synchronous {@link logprobs}: blocks the calling thread; for small inputs. */
export function logprobsSync(logits: Float32Array, targets: Int32Array, options?: LogprobOptions): LogprobResult {
  return forward(false, logits, targets, options) as LogprobResult;
}

function backward(async: boolean, logits: unknown, targets: unknown, gradLogp: unknown, options?: LogprobBackwardOptions) {
  const c = plainCall('logprobsBackward', logits, targets, options, LOGPROB_BACKWARD_OPTIONS);
  const rows = c.targets.length;
  const g = check.float32Array('logprobsBackward gradLogp', gradLogp);
  check.length('logprobsBackward gradLogp', g, rows, `[T] = [${rows}]`);
  const gEntropy = options?.gradEntropy === undefined ? null : check.float32Array('logprobsBackward gradEntropy', options.gradEntropy);
  if (gEntropy) check.length('logprobsBackward gradEntropy', gEntropy, rows, `[T] = [${rows}]`);
  const out = options?.out === undefined ? new Float32Array(c.logits.length) : check.float32Array('logprobsBackward out', options.out);
  check.length('logprobsBackward out', out, c.logits.length, `[T, V] = [${rows}, ${c.vocab}]`);
  const saved = savedStats('logprobsBackward', options?.saved, rows, gEntropy !== null);
  const backend = kernelBinding('logprobsBackward', options?.device, 'logprobBackward');
  return runNative(async,
    (a) => backend.logprobBackward(c.logits, c.targets, c.vocab, nativeOptions(c.s), g, gEntropy, out, a, saved.lse, saved.entropy),
    () => out);
}

/**
 * Gradient of a loss with respect to the logits, given its gradient with respect to logp
 * (and to the entropy). Returns gradLogits [T, V]; pass `out: logits` to overwrite the logits in place.
 */
export function logprobsBackward(
  logits: Float32Array, targets: Int32Array, gradLogp: Float32Array, options?: LogprobBackwardOptions,
): Promise<Float32Array> {
  return rejectOnThrow(() => backward(true, logits, targets, gradLogp, options) as Promise<Float32Array>);
}

/** Synchronous {@link logprobsBackward}. */
export function logprobsBackwardSync(
  logits: Float32Array, targets: Int32Array, gradLogp: Float32Array, options?: LogprobBackwardOptions,
): Float32Array {
  return backward(false, logits, targets, gradLogp, options) as Float32Array;
}

/** hidden [T, H] and weight [V, H] in their storage type. */
type LinearInputs =
  | { bf16: false; hidden: Float32Array; weight: Float32Array }
  | { bf16: true; hidden: Uint16Array; weight: Uint16Array };

interface LinearCall {
  inputs: LinearInputs;
  bias: Float32Array | null;
  targets: Int32Array;
  hiddenSize: number;
  vocab: number;
  chunkSize: number;
  chunkVocab: number;
  s: Scalars;
}

function linearInputs(fn: string, hidden: unknown, weight: unknown, dtype: LinearDtype): LinearInputs {
  if (dtype === 'bf16') return { bf16: true, hidden: check.uint16Array(`${fn} hidden`, hidden), weight: check.uint16Array(`${fn} weight`, weight) };
  if (hidden instanceof Uint16Array || weight instanceof Uint16Array) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${fn} hidden and weight as Float32Array for dtype 'f32', but received a Uint16Array (pass dtype: 'bf16' for bfloat16 bits)`);
  }
  return { bf16: false, hidden: check.float32Array(`${fn} hidden`, hidden), weight: check.float32Array(`${fn} weight`, weight) };
}

function linearCall(fn: string, hidden: unknown, weight: unknown, targets: unknown, options: LinearLogprobOptions | undefined,
  schema: Schema): LinearCall {
  const o = resolve(schema as typeof LINEAR_LOGPROB_OPTIONS, fn, options);
  const inputs = linearInputs(fn, hidden, weight, o.dtype);
  const h = inputs.hidden, w = inputs.weight;
  const t = check.int32Array(`${fn} targets`, targets);
  const s = o;
  const rows = t.length;
  const hiddenSize = rows > 0 ? h.length / rows : 0;
  if (rows === 0 ? h.length !== 0 : !Number.isInteger(hiddenSize) || hiddenSize < 1) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${fn} hidden of shape [T, H] with T = ${rows}, but ${h.length} elements is not a positive multiple of ${rows}`);
  }
  const H = rows > 0 ? hiddenSize : Math.max(1, w.length);
  if (w.length === 0 || w.length % H !== 0) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${fn} weight of shape [V, H] with H = ${H}, but ${w.length} elements is not a positive multiple of ${H}`);
  }
  const vocab = w.length / H;
  const bias = o.bias === undefined ? null : check.float32Array(`${fn} bias`, o.bias);
  if (bias) check.length(`${fn} bias`, bias, vocab, `[V] = [${vocab}]`);
  checkTargets(`${fn} targets`, t, vocab, s.ignoreIndex);
  return { inputs, bias, targets: t, hiddenSize: H, vocab, chunkSize: o.chunkSize, chunkVocab: o.chunkVocab, s };
}

/** The forward's kept logits [T, V]: logitsOut, or a new array; null without keepLogits. */
function keptLogits(fn: string, c: LinearCall, options: LinearLogprobOptions | undefined): Float32Array | null {
  const size = c.targets.length * c.vocab;
  if (options?.keepLogits) return callerBuffer(fn, 'logitsOut', options.logitsOut, size, `[T, V] = [${c.targets.length}, ${c.vocab}]`);
  if (options?.logitsOut !== undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${fn} logitsOut only with keepLogits: true`);
  return null;
}

function linearForward(async: boolean, hidden: unknown, weight: unknown, targets: unknown, options?: LinearLogprobOptions) {
  const c = linearCall('linearLogprobs', hidden, weight, targets, options, LINEAR_LOGPROB_OPTIONS);
  const rows = c.targets.length;
  const logp = new Float32Array(rows); // [T]
  const entropy = c.s.entropy ? new Float32Array(rows) : null; // [T]
  const lse = c.s.lse ? new Float32Array(rows) : null; // [T]
  const logits = keptLogits('linearLogprobs', c, options); // [T, V]
  const x = c.inputs;
  const backend = kernelBinding('linearLogprobs', options?.device, x.bf16 ? 'linearLogprobForwardBf16' : 'linearLogprobForward');
  const rest = [c.bias, c.targets, c.hiddenSize, linearOptions(c), logp, entropy, lse] as const;
  return runNative(async,
    (a) => (x.bf16
      ? backend.linearLogprobForwardBf16(x.hidden, x.weight, ...rest, a, logits)
      : backend.linearLogprobForward(x.hidden, x.weight, ...rest, a, logits)),
    (): LinearLogprobResult => ({ logp, ...(entropy && { entropy }), ...(lse && { lse }), ...(logits && { logits }) }));
}

/**
 * The same result as `logprobs(hidden · weightᵀ + bias, targets)`, computed tile by tile with an
 * online log-sum-exp so that no buffer larger than chunkSize × chunkVocab floats exists.
 * @param hidden [T, H]  @param weight [V, H]  @param targets [T]
 * hidden and weight are Float32Arrays, or Uint16Arrays of bfloat16 bits with `dtype: 'bf16'` (see {@link toBf16}).
 */
export function linearLogprobs(
  hidden: Float32Array | Uint16Array, weight: Float32Array | Uint16Array, targets: Int32Array, options?: LinearLogprobOptions,
): Promise<LinearLogprobResult> {
  return rejectOnThrow(() => linearForward(true, hidden, weight, targets, options) as Promise<LinearLogprobResult>);
}

/** Synchronous {@link linearLogprobs}. */
export function linearLogprobsSync(
  hidden: Float32Array | Uint16Array, weight: Float32Array | Uint16Array, targets: Int32Array, options?: LinearLogprobOptions,
): LinearLogprobResult {
  return linearForward(false, hidden, weight, targets, options) as LinearLogprobResult;
}

function callerBuffer(fn: string, name: string, given: Float32Array | undefined, size: number, shape: string): Float32Array {
  if (given === undefined) return new Float32Array(size);
  const buffer = check.float32Array(`${fn} ${name}`, given);
  check.length(`${fn} ${name}`, buffer, size, shape);
  return buffer;
}

/** The backward's `saved` option: the forward's lse [T] (and entropy [T], needed with gradEntropy), or nulls. */
function savedStats(fn: string, saved: unknown, rows: number, withEntropy: boolean) {
  if (saved === undefined) return { lse: null, entropy: null };
  if (typeof saved !== 'object' || saved === null) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${fn} saved to be the forward's result { lse, entropy? }`);
  }
  const { lse, entropy } = saved as { lse?: unknown; entropy?: unknown };
  if (lse === undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${fn} saved.lse (run the forward with lse: true)`);
  const l = check.float32Array(`${fn} saved.lse`, lse);
  check.length(`${fn} saved.lse`, l, rows, `[T] = [${rows}]`);
  if (entropy === undefined) {
    if (withEntropy) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${fn} saved.entropy with gradEntropy (run the forward with entropy: true)`);
    return { lse: l, entropy: null };
  }
  const e = check.float32Array(`${fn} saved.entropy`, entropy);
  check.length(`${fn} saved.entropy`, e, rows, `[T] = [${rows}]`);
  return { lse: l, entropy: e };
}

/** The linear backward's `saved`: savedStats, and the forward's kept logits [T, V] or null. */
function savedLinearStats(fn: string, saved: SavedLinearLogprobStats | undefined, rows: number, vocab: number, withEntropy: boolean) {
  const stats = savedStats(fn, saved, rows, withEntropy);
  if (saved?.logits === undefined) return { ...stats, logits: null };
  const logits = check.float32Array(`${fn} saved.logits`, saved.logits);
  check.length(`${fn} saved.logits`, logits, rows * vocab, `[T, V] = [${rows}, ${vocab}]`);
  return { ...stats, logits };
}

function linearBackward(async: boolean, hidden: unknown, weight: unknown, targets: unknown, gradLogp: unknown,
  options?: LinearLogprobBackwardOptions) {
  const fn = 'linearLogprobsBackward';
  const c = linearCall(fn, hidden, weight, targets, options, LINEAR_LOGPROB_BACKWARD_OPTIONS);
  const rows = c.targets.length;
  const o = options ?? {};
  const g = check.float32Array(`${fn} gradLogp`, gradLogp);
  check.length(`${fn} gradLogp`, g, rows, `[T] = [${rows}]`);
  const gEntropy = o.gradEntropy === undefined ? null : check.float32Array(`${fn} gradEntropy`, o.gradEntropy);
  if (gEntropy) check.length(`${fn} gradEntropy`, gEntropy, rows, `[T] = [${rows}]`);
  const accumulate = o.accumulate ?? false; // checked by linearCall
  const grads: LinearLogprobGradients = {
    gradHidden: callerBuffer(fn, 'gradHidden', o.gradHidden, rows * c.hiddenSize, `[T, H] = [${rows}, ${c.hiddenSize}]`),
    gradWeight: callerBuffer(fn, 'gradWeight', o.gradWeight, c.vocab * c.hiddenSize, `[V, H] = [${c.vocab}, ${c.hiddenSize}]`),
  };
  if (c.bias) grads.gradBias = callerBuffer(fn, 'gradBias', o.gradBias, c.vocab, `[V] = [${c.vocab}]`);
  const saved = savedLinearStats(fn, o.saved, rows, c.vocab, gEntropy !== null);
  const x = c.inputs;
  const backend = kernelBinding(fn, o.device, x.bf16 ? 'linearLogprobBackwardBf16' : 'linearLogprobBackward');
  const rest = [c.bias, c.targets, c.hiddenSize, linearOptions(c), g, gEntropy,
    grads.gradHidden, grads.gradWeight, grads.gradBias ?? null, accumulate] as const;
  return runNative(async,
    (a) => (x.bf16
      ? backend.linearLogprobBackwardBf16(x.hidden, x.weight, ...rest, a, saved.lse, saved.entropy, saved.logits)
      : backend.linearLogprobBackward(x.hidden, x.weight, ...rest, a, saved.lse, saved.entropy, saved.logits)),
    () => grads);
}

/**
 * Gradients of a loss through the fused LM head given d(loss)/d(logp) [T] (and d/d(entropy)); float32 for
 * either dtype of hidden and weight.
 */
export function linearLogprobsBackward(
  hidden: Float32Array | Uint16Array, weight: Float32Array | Uint16Array, targets: Int32Array, gradLogp: Float32Array, options?: LinearLogprobBackwardOptions,
): Promise<LinearLogprobGradients> {
  return rejectOnThrow(() => linearBackward(true, hidden, weight, targets, gradLogp, options) as Promise<LinearLogprobGradients>);
}

/** Synchronous {@link linearLogprobsBackward}. */
export function linearLogprobsBackwardSync(
  hidden: Float32Array | Uint16Array, weight: Float32Array | Uint16Array, targets: Int32Array, gradLogp: Float32Array, options?: LinearLogprobBackwardOptions,
): LinearLogprobGradients {
  return linearBackward(false, hidden, weight, targets, gradLogp, options) as LinearLogprobGradients;
}
