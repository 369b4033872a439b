// Micro-batches of one update (docs/trainer.md, "Memory: micro-batches"): the step's B sequences cut, in order,
// into runs of at most `microBatchTokens` prompt + completion tokens, and the loss options under which each run's
// gradient is its share of the one-big-batch gradient.
import { GrpoError } from '../errors.js';
import { resolveLossOptions, type PolicyLossOptions, type ResolvedLossOptions } from '../kernels/loss.js';
import type { ScoreResult, SequenceBatch } from '../policy/policy.js';

/** Rows [start, end) of the batch. */
export interface RowRange {
  start: number;
  end: number;
}

/**
 * Consecutive rows filled greedily up to `budget` prompt + completion tokens each; 0 = the whole batch at once. A
 * sequence longer than the budget is refused (GRPO_VALUE_RANGE): run alone it would break the memory bound.
 */
export function microBatchRanges(batch: SequenceBatch, budget: number): RowRange[] {
  const rows = batch.prompts.length;
  if (budget === 0) return [{ start: 0, end: rows }];
  const ranges: RowRange[] = [];
  let start = 0, used = 0;
  for (let i = 0; i < rows; i++) {
    const tokens = batch.prompts[i].length + batch.completions[i].length;
    if (tokens > budget) {
      throw new GrpoError('GRPO_VALUE_RANGE', `config "microBatchTokens" is ${budget} but sequence ${i} holds ${tokens} tokens `
        + `(prompt ${batch.prompts[i].length} + completion ${batch.completions[i].length}); set it to at least the longest prompt + generation.maxNewTokens`);
    }
    if (used + tokens > budget) {
      ranges.push({ start, end: i });
      start = i;
      used = 0;
    }
    used += tokens;
  }
  ranges.push({ start, end: rows });
  return ranges;
}

export function sliceBatch(batch: SequenceBatch, range: RowRange): SequenceBatch {
  return { prompts: batch.prompts.slice(range.start, range.end), completions: batch.completions.slice(range.start, range.end) };
}

/** The rows of `range` of a row-major [B, width] array (a view). */
export function sliceRows<T extends Float32Array | Uint8Array | Int32Array>(values: T, range: RowRange, width: number): T {
  return values.subarray(range.start * width, range.end * width) as T;
}

/** Scores of consecutive micro-batches joined into the scores of the whole batch. */
export function joinScores(parts: readonly ScoreResult[]): ScoreResult {
  return { logp: parts.flatMap((p) => p.logp), entropy: parts.flatMap((p) => p.entropy) };
}

function largestSegment(segments: Int32Array | undefined): number {
  let k = 1;
  if (segments) for (let i = 0; i < segments.length; i++) k = Math.max(k, segments[i] + 1);
  return k;
}

/**
 * The loss options of every micro-batch of a [rows, width] batch with loss mask `mask`: each count a loss divides by
 * (the token count of the global and local token means, B of the sequence means and of Dr.GRPO's B·L, T of
 * tokenSumOverL and of the all-positions mean, K of the item level) fixed to the whole batch's, so the micro-batches'
 * gradients add up to the whole batch's. The local token mean becomes the global one over the batch's Σ mask
 * (× accumulationSteps, which the global mean does not divide by); a micro-batch without loss tokens of its own
 * weighs zero unless the whole batch is empty. topEntropyQuantile < 1 keeps tokens by a quantile of the whole batch's
 * entropies, which no micro-batch sees: refused (GRPO_UNSUPPORTED).
 */
export function microBatchLossOptions(
  options: PolicyLossOptions, mask: Uint8Array, segments: Int32Array | undefined, rows: number, width: number,
): PolicyLossOptions {
  const o: ResolvedLossOptions = resolveLossOptions(options);
  if ((o.topEntropyQuantile as number) < 1) {
    throw new GrpoError('GRPO_UNSUPPORTED', 'config "microBatchTokens" with loss.topEntropyQuantile < 1: the entropy quantile is one of the whole batch; use microBatchTokens 0');
  }
  let tokens = 0;
  for (let i = 0; i < mask.length; i++) tokens += mask[i] ? 1 : 0;
  const local = o.aggregation === 'localTokenMean';
  return {
    ...o,
    aggregation: local ? 'globalTokenMean' : o.aggregation,
    tokenCount: local ? Math.max(tokens, 1) * (o.accumulationSteps as number) : (o.tokenCount ?? Math.max(tokens, 1)),
    sequenceCount: o.sequenceCount ?? Math.max(rows, 1),
    lossScaleFactor: o.lossScaleFactor ?? Math.max(width, 1),
    numItems: o.isLevel === 'item' ? (o.numItems ?? largestSegment(segments)) : o.numItems,
    emptyBatch: tokens > 0 ? 'zero' : o.emptyBatch,
  };
}
