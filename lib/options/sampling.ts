// The options of sample / samplingProbs (lib/kernels/sampling-params.ts), declared once. Each per-row
// option is one number for every row or an array [B]; its range is checked per row by the sampler.
import {
  defaultsOf, FINITE, NON_NEGATIVE, opaque, POSITIVE, UNIT, UNIT_OPEN_CLOSED, type Field, type OptionsOf, type Range,
} from './schema.js';

/** Token ids per row: row r's ids are `ids[offsets[r] .. offsets[r + 1])`. */
export interface TokenLists {
  /** ids [offsets[B]] */
  ids: Int32Array;
  /** offsets [B + 1], non-decreasing, offsets[0] = 0 */
  offsets: Int32Array;
}

/** A bitset [B, ceil(V / 32)] (bit t % 32 of word t / 32 = token t) or per-row token-id lists. */
export type TokenMask = Uint32Array | TokenLists;

/** A per-row option: its range, read by the sampler on the number or on each row of the array. */
export interface RowField<T> extends Field<T> {
  readonly range: Range;
}

function perRow<T extends Float32Array | Int32Array>(def: number, doc: string, range: Range, array: string): RowField<number | T> {
  return { type: `number (${range.expectation.replace(/^to be /, '')}) or ${array} [B]`, doc, default: def, range, read: (v) => v as number | T };
}

/** The Philox key and counter: checked (and split into 32-bit words) by the sampler. */
function counter(doc: string): Field<number | bigint> {
  return { type: 'integer in [0, 2^53) or bigint in [0, 2^64)', doc, default: 0, read: (v) => v as number | bigint };
}

const TOP_K: Range = { ok: (v) => Number.isInteger(v) && v >= 0 && v < 2 ** 31, expectation: 'to be an integer in [0, 2^31)' };

export const SAMPLING_OPTIONS = {
  seed: counter('Philox key.'),
  step: counter('Philox counter: advance it for every new draw with the same seed, e.g. the decode position. Same (seed, step), same draw.'),
  temperature: perRow<Float32Array>(1, 'Logits are divided by it; 0 = greedy (the lowest id among the maxima).', NON_NEGATIVE, 'Float32Array'),
  topK: perRow<Int32Array>(0, 'Keep the tokens whose logit is >= the k-th largest (ties kept); 0 = off, k ≥ V is a no-op.', TOP_K, 'Int32Array'),
  topP: perRow<Float32Array>(1, 'Keep the smallest set of highest tokens whose mass reaches topP (ties kept); 1 = off.', UNIT_OPEN_CLOSED, 'Float32Array'),
  minP: perRow<Float32Array>(0, 'Keep tokens with p >= minP · p_max; 0 = off.', UNIT, 'Float32Array'),
  repetitionPenalty: perRow<Float32Array>(1, 'CTRL/HF repetition penalty on tokens in `history`: logit / r if > 0, else logit · r; 1 = off.', POSITIVE, 'Float32Array'),
  presencePenalty: perRow<Float32Array>(0, 'Subtracted once from the logit of every token in `history`.', FINITE, 'Float32Array'),
  frequencyPenalty: perRow<Float32Array>(0, 'Subtracted per occurrence in `history`.', FINITE, 'Float32Array'),
  history: opaque<TokenLists>('{ ids: Int32Array, offsets: Int32Array [B + 1] }', 'Each row\'s generated ids, for the penalties: row r\'s are `ids[offsets[r] .. offsets[r + 1])`.'),
  allow: opaque<TokenMask>('Uint32Array [B, ceil(V / 32)] or token lists', 'Only these tokens may be drawn: a bitset (bit `t % 32` of word `t / 32`) or token-id lists as `history`.', 'every token'),
  deny: opaque<TokenMask>('Uint32Array [B, ceil(V / 32)] or token lists', 'These tokens may not be drawn (same two forms; allow ∧ ¬deny), e.g. end-of-sequence before a minimum length.'),
};

/** Options of sample and samplingProbs. */
export type SamplingOptions = OptionsOf<typeof SAMPLING_OPTIONS>;
export type RowOption = 'temperature' | 'topK' | 'topP' | 'minP' | 'repetitionPenalty' | 'presencePenalty' | 'frequencyPenalty';

export const SAMPLING_DEFAULTS = defaultsOf(SAMPLING_OPTIONS);
export const SAMPLING_KEYS = Object.keys(SAMPLING_OPTIONS) as (keyof typeof SAMPLING_OPTIONS)[];
