// What the rank-wise tasks (recommendation, QA) share: a list per completion scored per rank, the length reward
// in the rank-1 cell, the step statistics of the rank rewards, and the rank-wise advantages scattered onto each
// item's tokens with the Rank-GRPO length shaping.
import { assembleRankRewards } from '../batch/rank-rewards.js';
import { zeroRewardFractions } from '../eval/diagnostics.js';
import { rankAdvantagesSync } from '../kernels/advantage.js';
import { tokenAdvantagesSync } from '../kernels/token-advantages.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import { itemSegments, type Spanned } from '../rewards/segments.js';
import type { ResolvedOptions } from './recipes.js';
import { padRows, type Rollout } from './rollout.js';
import { meanStd, type Signal, type StepStats } from './task.js';
import { rankRewardMetrics, rewardFunctionMeans, type TrlRewardMetrics } from './trl-metrics.js';

/** Token spans of the items: segments [B, T] (rank per token, −1 none, K = overflow) and EOS columns [B] (−1 when truncated). */
export interface ItemTokenSpans {
  segments: Int32Array;
  eos: Int32Array;
  /** share of lists whose items and tokens do not align */
  misaligned: number;
}

/** Rank rewards of a batch of lists: the per-rank rewards [B, K] and the length reward of each list [B]. */
export interface RankedLists {
  /** rewards [B, K] */
  rewards: Float32Array;
  /** length rewards [B] */
  length: Float32Array;
}

/** [B, T] item segments of every completion (`items[b]`: its parsed items with their spans), overflow items mapped to K, and EOS columns [B]. */
export function itemTokenSpans(items: ReadonlyArray<readonly Spanned[]>, rollout: Rollout, tokenizer: Tokenizer, ranks: number): ItemTokenSpans {
  let misaligned = 0;
  const rows = rollout.completions.map((ids, b) => {
    const segments = itemSegments(items[b], tokenizer.offsets(ids), ranks);
    if (!segments.aligned) misaligned++;
    segments.overflow.forEach((o, t) => o && (segments.segments[t] = ranks));
    return segments.segments;
  });
  const eos = Int32Array.from(rollout.completions, (ids, b) => (rollout.truncated[b] || ids.length === 0 ? -1 : ids.length - 1));
  return { segments: padRows(rows, rollout.width, (n) => new Int32Array(n), -1), eos, misaligned: misaligned / rows.length };
}

/**
 * Rank rewards [G, S, K] with the weighted length reward, assembled as Rank-GRPO's `_calculate_rewards` does
 * (assembleRankRewards): a per-list reward enters the rank-1 cell only.
 */
export function withLengthReward(batch: RankedLists, ranks: number, weight: number): Float32Array {
  const rankRows = Array.from(batch.length, (_, b) => batch.rewards.subarray(b * ranks, (b + 1) * ranks)); // [N][K]
  return assembleRankRewards([rankRows, Array.from(batch.length)], { weights: [1, weight], ranks }).rewards;
}

/**
 * The rewards the advantages read (rank rewards plus `weight` × the length reward at rank 1), the step statistics
 * (reward of a list = the sum over its ranks) and the TRL reward metrics.
 */
export function rankStepRewards(batch: RankedLists, groups: number, candidates: number, ranks: number, weight: number): {
  rewards: Float32Array; stats: StepStats; trl: TrlRewardMetrics;
} {
  const rewards = withLengthReward(batch, ranks, weight);
  const perList = Float32Array.from(batch.length, (_, b) => rewards.subarray(b * ranks, (b + 1) * ranks).reduce((a, r) => a + r, 0));
  const { mean, std } = meanStd(perList);
  const zero = zeroRewardFractions(batch.rewards, groups, candidates, ranks);
  return {
    rewards,
    stats: {
      rewardMean: mean, rewardStd: std, zeroRewardCells: zero.cells, zeroRewardGroups: zero.requests,
      lengthReward: meanStd(batch.length).mean, exactLengthLists: batch.length.filter((l) => l === 0).length / batch.length.length,
    },
    trl: { ...rankRewardMetrics(rewards, candidates, ranks), ...rewardFunctionMeans({ rank: batch.rewards, length: batch.length }) },
  };
}

/** Rank-wise advantages of rewards [G, S, K], scattered onto the item tokens of `spans` with the recipe's length shaping. */
export function rankSignal(rewards: Float32Array, spans: ItemTokenSpans, rollout: Rollout, options: ResolvedOptions, candidates: number, ranks: number): {
  signal: Signal; stats: StepStats;
} {
  const { advantages, stats } = rankAdvantagesSync(rewards, { ...options.advantages, candidates, ranks });
  const { segments, eos } = spans;
  const tokens = tokenAdvantagesSync({ advantages, mask: rollout.mask, segments, eosPositions: eos }, options.tokenAdvantages);
  return { signal: { advantages: tokens.advantages, lossMask: tokens.lossMask, segments }, stats: { equalRewardCells: stats.fracCellsEqual } };
}
