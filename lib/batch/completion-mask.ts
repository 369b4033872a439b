// The completion mask of padded token ids, as the upstream trainers build it after generation
// (TRL grpo_trainer.py `is_eos` / `completion_mask`, verl `get_response_mask`): every token up to and
// including the first EOS is kept; a row without EOS keeps all T tokens.
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import * as check from '../validate.js';

/** Options of {@link completionMask}. */
export const COMPLETION_MASK_OPTIONS = {
  rows: opt.integer(undefined, 'B, the rows of `tokenIds` [B, T].', 0, undefined, { required: true }),
  // Required, and checked by eosIdsOf (one id or a non-empty list of them).
  eosTokenId: { ...opt.opaque<number | readonly number[]>('token id or token ids',
    'The EOS id (TRL `eos_token_id`), or several (verl `eos_token` list): the first of any ends the row.', 'none (required)'), required: true } as opt.Field<number | readonly number[]>,
};

export type CompletionMaskOptions = opt.ValuesOf<typeof COMPLETION_MASK_OPTIONS>;

export interface CompletionMask {
  /** [B, T] 1 on the completion's tokens (the first EOS included), 0 after it. */
  mask: Uint8Array;
  /** [B] column of each row's first EOS, −1 when the row has none (truncated; tokenAdvantages `eosPositions`). */
  eosPositions: Int32Array;
  /** [B] tokens kept per row (Σ_t mask). */
  lengths: Int32Array;
}

const FN = 'completionMask';

function eosIdsOf(eos: unknown): Set<number> {
  const ids = typeof eos === 'number' ? [eos] : eos;
  if (!Array.isArray(ids) || ids.length === 0) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} eosTokenId to be a token id or a non-empty list of them`);
  }
  return new Set(ids.map((id: unknown, j) => check.integer(`${FN} eosTokenId${typeof eos === 'number' ? '' : `[${j}]`}`, id, 0)));
}

/**
 * Builds the completion mask of right-padded completion ids [B, T]: everything after the first EOS is
 * masked, the EOS itself is kept.
 * @example
 * completionMask(Int32Array.of(5, 2, 0, 0, 7, 8, 9, 4), { rows: 2, eosTokenId: 2 }).mask; // [1, 1, 0, 0, 1, 1, 1, 1]
 */
export function completionMask(tokenIds: Int32Array, options: CompletionMaskOptions): CompletionMask {
  if (options === undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${FN} options with rows and eosTokenId but received undefined`);
  const { rows, eosTokenId } = opt.checkOptions(COMPLETION_MASK_OPTIONS, opt.kernelNaming(FN), options, {});
  const ids = check.int32Array(`${FN} tokenIds`, tokenIds);
  const eos = eosIdsOf(eosTokenId);
  if (rows === 0 ? ids.length !== 0 : ids.length % rows !== 0) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${FN} tokenIds of shape [B, T] with B = ${rows} but received ${ids.length} elements`);
  }
  const cols = rows === 0 ? 0 : ids.length / rows;
  const mask = new Uint8Array(ids.length); // [B, T]
  const eosPositions = new Int32Array(rows).fill(-1); // [B]
  const lengths = new Int32Array(rows); // [B]
  for (let b = 0; b < rows; b++) {
    const row = ids.subarray(b * cols, (b + 1) * cols);
    const first = row.findIndex((id) => eos.has(id));
    eosPositions[b] = first;
    lengths[b] = first < 0 ? cols : first + 1;
    mask.fill(1, b * cols, b * cols + lengths[b]);
  }
  return { mask, eosPositions, lengths };
}
