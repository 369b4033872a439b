// Rank-GRPO's reward assembly and the upstream completion mask, against values computed from the
// upstream code transcribed into numpy:
// - yaochenzhu/Rank-GRPO 0808d82c0 libs/trl/rank_grpo_trainer.py L1381-1440 (`_calculate_rewards`: NaN
//   padding of ragged lists, width alignment across functions) and L1784-1804 (weighted nansum, then the
//   per-rank group mean / torch.std + 1e-4);
// - huggingface/trl f2cd57710 trl/trainer/grpo_trainer.py L1868-1873 (`is_eos`, `eos_idx`,
//   `completion_mask = sequence_indices <= eos_idx`) and volcengine/verl b178a3cd5
//   verl/utils/torch_functional.py L342-362 (`get_response_mask` with a list of EOS ids).
import { describe, expect, it } from 'vitest';
import { assembleRankRewards, completionMask, rankAdvantagesSync } from '../lib/index.js';
import { expectClose } from './helpers/close.js';
import { codeOf } from './helpers/errors.js';

// Three reward functions for N = 4 completions: ragged per-rank lists with a None, a scalar, another list.
const OUTPUTS = [
  [[1, 0, 1, 1], [0, 1], null, [1, 1, 0]],
  [0.5, -1.0, null, 0.25],
  [[0, 0.5, 0.5], [1], [0.5, 0.5], [0, 0, 0, 1]],
];
const WEIGHTS = [1, 2, 0.5];

describe('Rank-GRPO reward assembly', () => {
  it('pads ragged lists with NaN, puts a scalar at rank 1 only and sums NaN as 0 with the weights', () => {
    const { rewards, perFunction, completions, functions, ranks } = assembleRankRewards(OUTPUTS, { weights: WEIGHTS });
    expect([completions, functions, ranks]).toEqual([4, 3, 4]);
    expectClose(rewards, [2, 0.25, 1.25, 1, -1.5, 1, 0, 0, 0.25, 0.25, 0, 0, 1.5, 1, 0, 0.5]);
    // rewards_per_func [N, F, K]: completion 1 = [[0, 1, NaN, NaN], [-1, NaN, NaN, NaN], [1, NaN, NaN, NaN]].
    expectClose(perFunction.subarray(12, 24), [0, 1, NaN, NaN, -1, NaN, NaN, NaN, 1, NaN, NaN, NaN]);
    expect(Array.from(perFunction.subarray(24, 32)).every(Number.isNaN)).toBe(true); // completion 2: None twice
  });

  it('feeds rankAdvantages: the per-rank group mean / std + 1e-4 of the assembled rewards (L1788-1804)', () => {
    const { rewards, ranks } = assembleRankRewards(OUTPUTS, { weights: WEIGHTS });
    const { advantages } = rankAdvantagesSync(rewards, { candidates: 4, ranks });
    expectClose(advantages, [
      0.92166299, -0.86582541, 1.49976003, 1.30530977, -1.32238603, 0.86582541, -0.49992001, -0.78318584,
      -0.20036152, -0.86582541, -0.49992001, -0.78318584, 0.60108459, 0.86582541, -0.49992001, 0.26106194,
    ]);
  });

  it('weights default to 1; an all-None per-rank function still has width 1 (max_len = 1, L1417-1418)', () => {
    expectClose(assembleRankRewards([[[1, 2], [3]]]).rewards, [1, 2, 3, 0]);
    const empty = assembleRankRewards([[null, []]]);
    expect(empty.ranks).toBe(1);
    expectClose(empty.rewards, [0, 0]);
  });

  it('pads to the requested K and rejects a list longer than K', () => {
    expectClose(assembleRankRewards([[[1], [0, 1]]], { ranks: 3 }).rewards, [1, 0, 0, 0, 1, 0]);
    expect(codeOf(() => assembleRankRewards([[[1, 1, 1]]], { ranks: 2 }))).toBe('GRPO_SHAPE_MISMATCH');
  });

  it('gives typed errors for bad input', () => {
    expect(codeOf(() => assembleRankRewards([]))).toBe('GRPO_INVALID_ARGUMENT');
    expect(codeOf(() => assembleRankRewards([[1, 2], [1]]))).toBe('GRPO_SHAPE_MISMATCH');
    expect(codeOf(() => assembleRankRewards([[1, [2]]] as never))).toBe('GRPO_INVALID_ARGUMENT');
    expect(codeOf(() => assembleRankRewards([[[1, Infinity]]]))).toBe('GRPO_NON_FINITE');
    expect(codeOf(() => assembleRankRewards([[1]], { weights: [1, 2] }))).toBe('GRPO_SHAPE_MISMATCH');
    expect(codeOf(() => assembleRankRewards([[1]], { weights: [NaN] }))).toBe('GRPO_INVALID_ARGUMENT');
    expect(codeOf(() => assembleRankRewards([[1]], { weight: [1] } as object))).toBe('GRPO_UNKNOWN_OPTION');
  });
});

// [B = 4, T = 4] right-padded completions, EOS id 2 (pad 0).
const IDS = Int32Array.of(5, 2, 0, 0, 7, 8, 9, 4, 2, 2, 3, 1, 3, 1, 4, 2);

describe('completion mask from token ids', () => {
  it('masks everything after the first EOS and keeps the EOS (TRL L1868-1873)', () => {
    const { mask, eosPositions, lengths } = completionMask(IDS, { rows: 4, eosTokenId: 2 });
    expect(Array.from(mask)).toEqual([1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1]);
    expect(Array.from(eosPositions)).toEqual([1, -1, 0, 3]);
    expect(Array.from(lengths)).toEqual([2, 4, 1, 4]);
  });

  it('with several EOS ids the first of any ends the row (verl get_response_mask, L361-362)', () => {
    const { mask } = completionMask(IDS, { rows: 4, eosTokenId: [1, 2] });
    expect(Array.from(mask)).toEqual([1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0]);
  });

  it('gives typed errors for bad input', () => {
    expect(codeOf(() => completionMask(IDS, { rows: 3, eosTokenId: 2 }))).toBe('GRPO_SHAPE_MISMATCH');
    expect(codeOf(() => completionMask(Array.from(IDS) as unknown as Int32Array, { rows: 4, eosTokenId: 2 }))).toBe('GRPO_INVALID_ARGUMENT');
    expect(codeOf(() => completionMask(IDS, { rows: 4, eosTokenId: [] }))).toBe('GRPO_INVALID_ARGUMENT');
    expect(codeOf(() => completionMask(IDS, { rows: 4, eosTokenId: -1 }))).toBe('GRPO_VALUE_RANGE');
    expect(codeOf(() => completionMask(IDS, { rows: 4, eos: 2 } as never))).toBe('GRPO_UNKNOWN_OPTION');
  });
});
