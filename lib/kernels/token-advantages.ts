// Advantages onto tokens: Rank-GRPO's per-item scatter with length shaping, and the broadcast of
// sequence advantages under a truncation policy. Native kernels: native/kernels/advantage/advantage_tokens.cc.
import { kernelBinding, type NativeLengthShaping } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import * as check from '../validate.js';
import { kernelNaming, type ValuesOf, checkOptions } from '../options/schema.js';
import {
  LENGTH_SHAPING_OPTIONS, TOKEN_ADVANTAGE_DEFAULTS, TOKEN_ADVANTAGE_OPTIONS, type TokenAdvantageOptions,
} from '../options/token-advantages.js';
import { rejectOnThrow, runNative } from './native-call.js';

export {
  LENGTH_SHAPING_OPTIONS, TOKEN_ADVANTAGE_DEFAULTS, TOKEN_ADVANTAGE_OPTIONS, type LengthShaping, type TokenAdvantageOptions,
} from '../options/token-advantages.js';

type Resolved = ValuesOf<typeof TOKEN_ADVANTAGE_OPTIONS>;

/** Inputs of {@link tokenAdvantages}. Item scatter when `segments` is given, else sequence broadcast. */
export interface TokenAdvantageInput {
  /** [B, K] per-rank advantages (with `segments`) or [B] sequence advantages. */
  advantages: Float32Array;
  /** [B, T] 0/1 completion mask. */
  mask: Uint8Array;
  /** [B, T] item index per token (−1 none; ≥ K is overflow). Selects the Rank-GRPO scatter. */
  segments?: Int32Array;
  /** [B] column of each row's EOS token, −1 when the row was truncated (item scatter only). */
  eosPositions?: Int32Array;
  /** [B] 1 where the completion was truncated (sequence broadcast). */
  truncated?: Uint8Array;
  /** [B] first token of the unfinished suffix of a truncated row (policy `"dropSuffix"`). */
  prefixEnd?: Int32Array;
}

export interface TokenAdvantageResult {
  /** [B, T] advantage per token, 0 outside the loss mask. */
  advantages: Float32Array;
  /** [B, T] the loss mask after the truncation policy (the input mask for the item scatter). */
  lossMask: Uint8Array;
}

const INPUT_KEYS = ['advantages', 'mask', 'segments', 'eosPositions', 'truncated', 'prefixEnd'] as const;
const FN = 'tokenAdvantages';

function columnsOf(mask: Uint8Array, rows: number): number {
  if (rows === 0 ? mask.length !== 0 : mask.length % rows !== 0) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${FN} mask of shape [B, T] with B = ${rows} but received ${mask.length} elements`);
  }
  return rows === 0 ? 0 : mask.length / rows;
}

function nativeShaping(s: ValuesOf<typeof LENGTH_SHAPING_OPTIONS>): NativeLengthShaping {
  return { enabled: s.enabled, endOfList: s.endOfList, extraToken: s.extraToken, earlyStop: s.earlyStop };
}

function itemScatter(async: boolean, input: TokenAdvantageInput, o: Resolved, segments: Int32Array) {
  if (input.eosPositions === undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} eosPositions [B] with segments but received undefined`);
  const eos = check.int32Array(`${FN} eosPositions`, input.eosPositions);
  const rows = eos.length;
  const cols = columnsOf(input.mask, rows);
  check.length(`${FN} segments`, segments, rows * cols, `[B, T] = [${rows}, ${cols}]`);
  const ranks = check.integer(`${FN} ranks`, o.ranks ?? (rows > 0 ? input.advantages.length / rows : 1), 1);
  check.length(`${FN} advantages`, input.advantages, rows * ranks, `[B, K] = [${rows}, ${ranks}]`);
  check.finite(`${FN} advantages`, input.advantages);
  for (let b = 0; b < rows; b++) {
    if (eos[b] < -1 || eos[b] >= cols) throw new GrpoError('GRPO_INDEX_RANGE', `Expected ${FN} eosPositions[${b}] in [-1, ${cols}) but received ${eos[b]}`);
  }
  // segments below -1 are rejected natively (GRPO_INDEX_RANGE), without a JS pass over [B, T]
  const out = new Float32Array(rows * cols); // [B, T]
  const backend = kernelBinding(FN, o.device, 'scatterItemAdvantages');
  return runNative(async,
    (a) => backend.scatterItemAdvantages(input.advantages, segments, input.mask, eos, cols, ranks, nativeShaping(o.lengthShaping), out, a),
    (): TokenAdvantageResult => ({ advantages: out, lossMask: input.mask }));
}

function optionalRowArray<T extends Uint8Array | Int32Array>(name: string, value: T | undefined, rows: number,
  read: (n: string, v: unknown) => T): T | null {
  if (value === undefined) return null;
  const array = read(`${FN} ${name}`, value);
  check.length(`${FN} ${name}`, array, rows, `[B] = [${rows}]`);
  return array;
}

function broadcast(async: boolean, input: TokenAdvantageInput, o: Resolved) {
  const adv = input.advantages;
  check.finite(`${FN} advantages`, adv);
  const rows = adv.length;
  const cols = columnsOf(input.mask, rows);
  const { truncation } = o;
  const truncated = optionalRowArray('truncated', input.truncated, rows, check.uint8Array);
  const prefixEnd = optionalRowArray('prefixEnd', input.prefixEnd, rows, check.int32Array);
  if (truncation !== 'keep' && !truncated) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} truncated [B] with truncation "${truncation}"`);
  if (truncation === 'dropSuffix' && !prefixEnd) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} prefixEnd [B] with truncation "dropSuffix"`);
  const out = new Float32Array(rows * cols); // [B, T]
  const lossMask = new Uint8Array(rows * cols); // [B, T]
  const backend = kernelBinding(FN, o.device, 'broadcastAdvantages');
  return runNative(async,
    (a) => backend.broadcastAdvantages(adv, input.mask, truncated, prefixEnd, cols, { truncation }, out, lossMask, a),
    (): TokenAdvantageResult => ({ advantages: out, lossMask }));
}

function tokens(async: boolean, input: TokenAdvantageInput, options: TokenAdvantageOptions | undefined) {
  const o = checkOptions(TOKEN_ADVANTAGE_OPTIONS, kernelNaming(FN), options, TOKEN_ADVANTAGE_DEFAULTS);
  check.knownKeys(`${FN} input`, input, INPUT_KEYS);
  if (input === undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} input but received undefined`);
  check.float32Array(`${FN} advantages`, input.advantages);
  check.uint8Array(`${FN} mask`, input.mask);
  if (input.segments === undefined) return broadcast(async, input, o);
  return itemScatter(async, input, o, check.int32Array(`${FN} segments`, input.segments));
}

/**
 * Advantages per token [B, T]. With `segments`: Rank-GRPO's scatter of per-rank advantages [B, K]
 * onto each item's tokens (no advantage on EOS) plus length shaping. Without: sequence advantages [B]
 * broadcast over the mask, with a truncation policy that changes the loss mask only.
 */
export function tokenAdvantages(input: TokenAdvantageInput, options?: TokenAdvantageOptions): Promise<TokenAdvantageResult> {
  return rejectOnThrow(() => tokens(true, input, options) as Promise<TokenAdvantageResult>);
}

/** Synchronous {@link tokenAdvantages}. */
export function tokenAdvantagesSync(input: TokenAdvantageInput, options?: TokenAdvantageOptions): TokenAdvantageResult {
  return tokens(false, input, options) as TokenAdvantageResult;
}
