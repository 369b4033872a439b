// Packing prompts and completions into the native model's layout: tokens [T] of sequences laid
// end to end, offsets [nseq + 1], and targets [T] that score only completion tokens.
import { GrpoError } from '../errors.js';
import * as check from '../validate.js';
import type { SequenceBatch } from './policy.js';

export const IGNORE_INDEX = -100;

export interface PackedBatch {
  tokens: Int32Array; // [T]
  offsets: Float64Array; // [nseq + 1]
  targets: Int32Array; // [T]
  /** Where completion i's scores start in the [T] outputs. */
  scoreStart: number[];
  completionLength: number[];
}

function checkIds(name: string, ids: ArrayLike<number>, vocab: number): void {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (!Number.isInteger(id) || id < 0 || id >= vocab) {
      throw new GrpoError('GRPO_INDEX_RANGE', `Expected ${name}[${i}] to be a token id in [0, ${vocab}) but received ${id}`);
    }
  }
}

/**
 * Sequence i is prompt ++ completion without its last token (nothing follows it); position
 * prompt.length - 1 + j predicts completion[j].
 */
export function packBatch(batch: SequenceBatch, vocab: number, maxPositions: number): PackedBatch {
  const { prompts, completions } = batch;
  if (!Array.isArray(prompts) || !Array.isArray(completions) || prompts.length !== completions.length || prompts.length === 0) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH',
      `Expected batch.prompts and batch.completions to be non-empty arrays of the same length but received ${prompts?.length} and ${completions?.length}`);
  }
  let total = 0;
  prompts.forEach((p, i) => {
    checkIds(`prompts[${i}]`, p, vocab);
    checkIds(`completions[${i}]`, completions[i], vocab);
    if (p.length === 0) throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected prompts[${i}] to hold at least one token (e.g. BOS) but it is empty`);
    const length = p.length + Math.max(completions[i].length - 1, 0);
    if (length > maxPositions) {
      throw new GrpoError('GRPO_SHAPE_MISMATCH', `Sequence ${i} needs ${length} positions but the model has max_position_embeddings = ${maxPositions}`);
    }
    total += length;
  });
  const tokens = new Int32Array(total), targets = new Int32Array(total).fill(IGNORE_INDEX);
  const offsets = new Float64Array(prompts.length + 1);
  const scoreStart: number[] = [], completionLength: number[] = [];
  let at = 0;
  prompts.forEach((p: ArrayLike<number>, i) => {
    const c: ArrayLike<number> = completions[i];
    tokens.set(Array.from(p), at);
    tokens.set(Array.from(c).slice(0, Math.max(c.length - 1, 0)), at + p.length);
    for (let j = 0; j < c.length; j++) targets[at + p.length - 1 + j] = c[j];
    scoreStart.push(at + p.length - 1);
    completionLength.push(c.length);
    at += p.length + Math.max(c.length - 1, 0);
    offsets[i + 1] = at;
  });
  return { tokens, offsets, targets, scoreStart, completionLength };
}

/** Splits a [T] output into one array per completion. */
export function unpack(values: Float32Array, packed: PackedBatch): Float32Array[] {
  return packed.scoreStart.map((start, i) => values.slice(start, start + packed.completionLength[i]));
}

/** Gathers per-completion arrays back into a [T] array (zeros elsewhere), checking their type and lengths. */
export function repack(name: string, parts: readonly Float32Array[], packed: PackedBatch): Float32Array {
  const out = new Float32Array(packed.tokens.length);
  const count = packed.scoreStart.length;
  if (!Array.isArray(parts)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${name} to be an Array of ${count} Float32Arrays (one per completion) but received ${check.describe(parts)}`);
  }
  if (parts.length !== count) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected ${name} to hold ${count} arrays (one per completion) but received ${parts.length}`);
  }
  parts.forEach((part, i) => {
    check.float32Array(`${name}[${i}]`, part);
    check.length(`${name}[${i}]`, part, packed.completionLength[i], `[completions[${i}].length]`);
    for (let t = 0; t < part.length; t++) {
      if (!Number.isFinite(part[t])) throw new GrpoError('GRPO_NON_FINITE', `${name}[${i}][${t}] is ${part[t]}`);
    }
    out.set(part, packed.scoreStart[i]);
  });
  return out;
}
