// The policy loss of an update and phase 6 of the step, forward → loss → backward, run micro-batch by micro-batch
// (lib/trainer/micro-batch.ts) so the gradients of the whole batch add up in the model before one optimizer step.
import { policyLossSync, type PolicyLossOptions, type PolicyLossStats } from '../kernels/loss.js';
import type { LossOutput, Policy, ScoreOptions, ScoreResult, SequenceBatch, TrainablePolicy } from '../policy/policy.js';
import { joinScores, microBatchLossOptions, microBatchRanges, sliceBatch, sliceRows, type RowRange } from './micro-batch.js';
import { padRows, unpadRows, type Rollout } from './rollout.js';
import type { Signal } from './task.js';

/** Old (μ > 1) and reference log-probs [B, T] of the rollout, when the step needs them. */
export type StoredScores = { old?: Float32Array; ref?: Float32Array };

/** Rows of an update: completion lengths [B], the padded width T, and the [B, T] signal and stored scores. */
interface LossRows {
  lengths: readonly number[];
  width: number;
  signal: Signal;
  stored: StoredScores;
}

function paddedLoss(rows: LossRows, options: PolicyLossOptions, scores: ScoreResult): LossOutput & { stats: PolicyLossStats } {
  const { lengths, width: T, signal, stored } = rows;
  const pad = (values: Float32Array[]) => padRows(values, T, (n) => new Float32Array(n));
  const out = policyLossSync({
    shape: [lengths.length, T],
    logp: pad(scores.logp),
    oldLogp: stored.old,
    refLogp: stored.ref,
    advantages: signal.advantages,
    mask: signal.lossMask,
    segments: signal.segments,
    entropy: pad(scores.entropy),
  }, options);
  return { loss: out.loss, gradLogp: unpadRows(out.gradLogp, lengths, T), stats: out.stats };
}

/** The GRPO policy loss of one update over padded [B, T] arrays: its value, gradient per completion and statistics. */
export function rolloutLoss(
  signal: Signal, rollout: Pick<Rollout, 'completions' | 'width'>, options: PolicyLossOptions, stored: StoredScores, scores: ScoreResult,
): LossOutput & { stats: PolicyLossStats } {
  return paddedLoss({ lengths: rollout.completions.map((c) => c.length), width: rollout.width, signal, stored }, options, scores);
}

/** The rows of `range` of an update (views of its [B, T] arrays). */
function rowsOf(all: LossRows, range: RowRange): LossRows {
  const cut = <T extends Float32Array | Uint8Array | Int32Array>(values: T) => sliceRows(values, range, all.width);
  const { signal, stored } = all;
  return {
    lengths: all.lengths.slice(range.start, range.end),
    width: all.width,
    signal: { advantages: cut(signal.advantages), lossMask: cut(signal.lossMask), segments: signal.segments && cut(signal.segments) },
    stored: { old: stored.old && cut(stored.old), ref: stored.ref && cut(stored.ref) },
  };
}

/** {@link Policy.score} of the batch, micro-batch by micro-batch (`microBatchTokens` 0: at once). */
export async function scoreInMicroBatches(policy: Policy, batch: SequenceBatch, microBatchTokens: number, options: ScoreOptions): Promise<ScoreResult> {
  const parts: ScoreResult[] = [];
  for (const range of microBatchRanges(batch, microBatchTokens)) parts.push(await policy.score(sliceBatch(batch, range), options));
  return joinScores(parts);
}

/** One update's batch: its sequences, rows, signal and stored scores. */
export interface UpdateBatch {
  batch: SequenceBatch;
  rollout: Pick<Rollout, 'completions' | 'width'>;
  signal: Signal;
  stored: StoredScores;
}

export interface AccumulateOptions {
  loss: PolicyLossOptions;
  /** Prompt + completion tokens per micro-batch; 0 = the whole batch at once. */
  microBatchTokens: number;
  /** The temperature the forward scores at. */
  temperature: number;
  /** Per-layer activation recomputation in the forwards (ForwardOptions.recompute); absent: off. */
  recompute?: boolean;
  /** Called after each forward, loss and backward (phase timing). */
  lap?: (phase: 'forward' | 'loss' | 'backward') => void;
}

/**
 * Forward, loss and backward of every micro-batch, leaving the whole batch's gradient in the policy for one optimizer
 * step. Each micro-batch's loss divides by the whole batch's counts ({@link microBatchLossOptions}); the returned
 * loss and statistics are those of one loss call over the whole batch's scores, as without micro-batches.
 */
export async function accumulateGradients(
  policy: TrainablePolicy, update: UpdateBatch, options: AccumulateOptions,
): Promise<{ loss: number; stats: PolicyLossStats }> {
  const { batch, rollout, signal, stored } = update;
  const lap = options.lap ?? (() => undefined);
  const all: LossRows = { lengths: rollout.completions.map((c) => c.length), width: rollout.width, signal, stored };
  const ranges = microBatchRanges(batch, options.microBatchTokens);
  const share = ranges.length > 1 ? microBatchLossOptions(options.loss, signal.lossMask, all.lengths.length, all.width) : options.loss;
  const parts: ScoreResult[] = [];
  let last: LossOutput & { stats: PolicyLossStats } | undefined;
  for (const range of ranges) {
    const forward = await policy.forward(sliceBatch(batch, range), { temperature: options.temperature, recompute: options.recompute });
    lap('forward');
    last = paddedLoss(rowsOf(all, range), share, forward.scores);
    lap('loss');
    await policy.backward(forward.handle, last);
    lap('backward');
    parts.push(forward.scores);
  }
  const whole = ranges.length > 1 ? paddedLoss(all, options.loss, joinScores(parts)) : last!;
  lap('loss');
  return { loss: whole.loss, stats: whole.stats };
}
