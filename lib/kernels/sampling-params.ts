// Options of the sampler → the per-row arrays the addon reads, validated with messages that name
// the option and the row. Shared scalars stay null (the native default) when they equal the default.
import { GrpoError } from '../errors.js';
import type { NativeSamplingParams } from '../binding/index.js';
import { SAMPLING_DEFAULTS, SAMPLING_OPTIONS, type RowOption, type SamplingOptions, type TokenLists } from '../options/sampling.js';
import { kernelNaming, type ValuesOf, checkOptions } from '../options/schema.js';
import * as check from '../validate.js';

export {
  SAMPLING_DEFAULTS, SAMPLING_KEYS, SAMPLING_OPTIONS, type SamplingOptions, type TokenLists, type TokenMask,
} from '../options/sampling.js';

type Resolved = ValuesOf<typeof SAMPLING_OPTIONS>;

function rowArray(fn: string, name: RowOption, value: unknown, rows: number): Float32Array | Int32Array | null {
  const rule = SAMPLING_OPTIONS[name].range;
  const label = `${fn} ${name}`;
  const isInt = name === 'topK';
  if (typeof value === 'number') {
    // The kernel reads float32: check the value it will see (1e39 is Infinity there).
    check.number(label, value, (x) => rule.ok(isInt ? x : Math.fround(x)), rule.expectation);
    if (value === SAMPLING_DEFAULTS[name]) return null;
    return isInt ? new Int32Array(rows).fill(value) : new Float32Array(rows).fill(value);
  }
  const array = isInt ? check.int32Array(label, value) : check.float32Array(label, value);
  check.length(label, array, rows, `[B] = [${rows}]`);
  for (let r = 0; r < rows; r++) {
    if (!rule.ok(array[r])) throw new GrpoError('GRPO_VALUE_RANGE', `Expected ${label}[${r}] ${rule.expectation} but received ${array[r]}`);
  }
  return array;
}

function tokenLists(label: string, value: unknown, rows: number, vocab: number): TokenLists {
  if (value === null || typeof value !== 'object') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${label} to be { ids: Int32Array, offsets: Int32Array } but received ${value === null ? 'null' : typeof value}`);
  }
  const { ids, offsets } = value as Partial<TokenLists>;
  const idArray = check.int32Array(`${label}.ids`, ids);
  const offsetArray = check.int32Array(`${label}.offsets`, offsets);
  check.length(`${label}.offsets`, offsetArray, rows + 1, `[B + 1] = [${rows + 1}]`);
  if (offsetArray[0] !== 0) throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${label}.offsets[0] = 0 but received ${offsetArray[0]}`);
  for (let r = 0; r < rows; r++) {
    if (offsetArray[r + 1] < offsetArray[r] || offsetArray[r + 1] > idArray.length) {
      throw new GrpoError('GRPO_SHAPE_MISMATCH',
        `Expected ${label}.offsets non-decreasing and <= ids.length = ${idArray.length}, but offsets[${r + 1}] = ${offsetArray[r + 1]} after ${offsetArray[r]}`);
    }
  }
  const used = idArray.subarray(0, offsetArray[rows]);
  for (let i = 0; i < used.length; i++) {
    if (used[i] < 0 || used[i] >= vocab) throw new GrpoError('GRPO_INDEX_RANGE', `Expected ${label}.ids[${i}] in [0, ${vocab}) but received ${used[i]}`);
  }
  return { ids: used, offsets: offsetArray };
}

/** The mask as a fresh bitset [B, words]: a copy of a bitset, or the bits of the listed ids. */
function maskBits(label: string, value: unknown, rows: number, vocab: number): Uint32Array {
  const words = Math.ceil(vocab / 32);
  if (value instanceof Uint32Array) {
    check.length(label, value, rows * words, `[B, ceil(V / 32)] = [${rows}, ${words}]`);
    return value.slice();
  }
  const lists = tokenLists(label, value, rows, vocab);
  const bits = new Uint32Array(rows * words); // [B, words]
  for (let r = 0; r < rows; r++) {
    for (let i = lists.offsets[r]; i < lists.offsets[r + 1]; i++) bits[r * words + (lists.ids[i] >>> 5)] |= 1 << (lists.ids[i] & 31);
  }
  return bits;
}

function allowBits(fn: string, options: Resolved, rows: number, vocab: number): Uint32Array | null {
  if (options.allow === undefined && options.deny === undefined) return null;
  const bits = options.allow === undefined ? new Uint32Array(rows * Math.ceil(vocab / 32)).fill(0xffffffff)
    : maskBits(`${fn} allow`, options.allow, rows, vocab);
  if (options.deny !== undefined) {
    const deny = maskBits(`${fn} deny`, options.deny, rows, vocab);
    for (let i = 0; i < bits.length; i++) bits[i] &= ~deny[i];
  }
  return bits;
}

function counterWords(label: string, value: unknown): [number, number] {
  if (typeof value === 'bigint') {
    if (value < 0n || value >= 1n << 64n) throw new GrpoError('GRPO_VALUE_RANGE', `Expected ${label} in [0, 2^64) but received ${value}`);
    return [Number(value & 0xffffffffn), Number(value >> 32n)];
  }
  const v = check.integer(label, value, 0);
  return [v % 2 ** 32, Math.floor(v / 2 ** 32)];
}

/** Validates `options` for a batch [rows, vocab] and builds the addon's parameter object. */
export function nativeSamplingParams(fn: string, options: SamplingOptions | undefined, rows: number, vocab: number): NativeSamplingParams {
  const o = checkOptions(SAMPLING_OPTIONS, kernelNaming(fn), options, SAMPLING_DEFAULTS);
  const history = o.history === undefined ? null : tokenLists(`${fn} history`, o.history, rows, vocab);
  const [seedLo, seedHi] = counterWords(`${fn} seed`, o.seed);
  const [stepLo, stepHi] = counterWords(`${fn} step`, o.step);
  return {
    temperature: rowArray(fn, 'temperature', o.temperature, rows) as Float32Array | null,
    topK: rowArray(fn, 'topK', o.topK, rows) as Int32Array | null,
    topP: rowArray(fn, 'topP', o.topP, rows) as Float32Array | null,
    minP: rowArray(fn, 'minP', o.minP, rows) as Float32Array | null,
    repetitionPenalty: rowArray(fn, 'repetitionPenalty', o.repetitionPenalty, rows) as Float32Array | null,
    presencePenalty: rowArray(fn, 'presencePenalty', o.presencePenalty, rows) as Float32Array | null,
    frequencyPenalty: rowArray(fn, 'frequencyPenalty', o.frequencyPenalty, rows) as Float32Array | null,
    allow: allowBits(fn, o, rows, vocab),
    history: history?.ids ?? null,
    historyOffsets: history?.offsets ?? null,
    seedLo, seedHi, stepLo, stepHi, firstRow: 0,
  };
}
