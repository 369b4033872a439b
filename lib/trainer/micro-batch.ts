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

/** `o` when its gradient can be split into micro-batches: not with topEntropyQuantile < 1, a quantile of the whole batch. */
export function checkMicroBatchLoss(o: ResolvedLossOptions): ResolvedLossOptions {
  if ((o.topEntropyQuantile as number) < 1) {
    throw new GrpoError('GRPO_UNSUPPORTED', 'config "microBatchTokens" with loss.topEntropyQuantile < 1: the entropy quantile is one of the whole batch; use microBatchTokens 0');
  }
  return o;
}

/**
 * The loss options of every micro-batch of a [rows, width] batch with loss mask `mask`: each count a loss divides by
 * (the token count of the global and local token means, B of the sequence means and of Dr.GRPO's B·L, T of
 * tokenSumOverL and of the all-positions mean) fixed to the whole batch's, so the micro-batches' gradients add up to
 * the whole batch's (the item level's default K, a call's largest segment + 1, never merges two items, so it may
 * vary). The local token mean becomes the global one over the batch's Σ mask (× accumulationSteps, which the global
 * mean does not divide by). Refuses what {@link checkMicroBatchLoss} refuses.
 */
export function microBatchLossOptions(options: PolicyLossOptions, mask: Uint8Array, rows: number, width: number): PolicyLossOptions {
  const o = checkMicroBatchLoss(resolveLossOptions(options));
  let tokens = 0;
  for (let i = 0; i < mask.length; i++) tokens += mask[i] ? 1 : 0;
  const local = o.aggregation === 'localTokenMean';
  return {
    ...o,
    aggregation: local ? 'globalTokenMean' : o.aggregation,
    tokenCount: local ? Math.max(tokens, 1) * (o.accumulationSteps as number) : (o.tokenCount ?? Math.max(tokens, 1)),
    sequenceCount: o.sequenceCount ?? Math.max(rows, 1),
    lossScaleFactor: o.lossScaleFactor ?? Math.max(width, 1),
  };
}
