// The advantage statistics TRL logs (reward, reward_std, frac_reward_zero_std) and the reward weights,
// against values computed from TRL HEAD f2cd57710 trl/trainer/grpo_trainer.py L2676-2750 (the advantage
// block and its metrics) with nanstd from trl/trainer/utils.py L857-881, transcribed into numpy.
import { describe, expect, it } from 'vitest';
import { groupAdvantages, groupAdvantagesSync } from '../lib/kernels/advantage.js';
import { expectClose } from './helpers/close.js';

const f32 = (xs: readonly number[]) => Float32Array.from(xs);

// rewards_per_func [8, 2], G = 4, reward_weights [1, 0.5]; row 2 is unscorable (both functions None).
const GDPO_REWARDS = [1, 0, 0, NaN, NaN, NaN, 1, 1, 0, 2, 1, 0, 0, 1, 1, 3];
const GDPO = { groupSize: 4, objectives: 2, rewardWeights: [1, 0.5], multiObjective: 'normalizeThenSum' } as const;

describe('TRL normalize_then_sum (GDPO) statistics', () => {
  it('an unscorable row keeps NaN and leaves the batch mean and std (L2710-2720): A = 0 there, the others move', () => {
    // z_k = (R - nanmean_g) / (nanstd_g + 1e-4); r = nansum_k(w_k z_k), r[unscorable] = NaN;
    // A = nan_to_num((r - nanmean(r)) / (nanstd(r) + 1e-4)). Counting row 2 as r = 0 gives
    // [0.2929, -1.1085, -0.4532, ...] instead.
    const { advantages } = groupAdvantagesSync(f32(GDPO_REWARDS), GDPO);
    expectClose(advantages, [0.22376027, -1.15456978, 0, 0.93080942, -0.67228155, 0.28499004, -1.05957312, 1.44686462]);
  });

  it('reward / reward_std are the nanmean / nanstd of the weighted raw sum, not of the summed z-scores (L2746-2749)', () => {
    // rewards = nansum(R * w) with unscorable rows NaN: [1, 0, NaN, 1.5, 1, 1, 0.5, 2.5].
    const { stats } = groupAdvantagesSync(f32(GDPO_REWARDS), GDPO);
    expect(stats.rewardMean).toBeCloseTo(1.0714285, 6);
    expect(stats.rewardStd).toBeCloseTo(0.78679574, 6);
    expect(stats.fracRewardZeroStd).toBe(0);
  });

  it('the Promise form gives the same advantages and statistics', async () => {
    const sync = groupAdvantagesSync(f32(GDPO_REWARDS), GDPO);
    expect(await groupAdvantages(f32(GDPO_REWARDS), GDPO)).toEqual(sync);
  });

  it('with one generation per prompt every z-score is 0, so the batch std is 0 and counted (L2713, L2718-2720)', () => {
    const { advantages, stats } = groupAdvantagesSync(f32([1, 0, 0, 1, 2, 2]), { ...GDPO, groupSize: 1, rewardWeights: [1, 1] });
    expectClose(advantages, [0, 0, 0]);
    expect(stats.rewardMean).toBeCloseTo(2, 12);
    expect(stats.rewardStd).toBeCloseTo(1.7320508, 6);
    expect(stats.fracRewardZeroStd).toBe(1);
  });

  it('also applies to a single reward function (TRL does not special-case one function)', () => {
    // One function, G = 2: z = ±0.70706 and ±0.70710 per group, then the batch normalisation of r = z.
    const { advantages, stats } = groupAdvantagesSync(f32([3, 1, 10, 0]), { groupSize: 2, multiObjective: 'normalizeThenSum' });
    expectClose(advantages, [0.86589487, -0.86589487, 0.86594384, -0.86594384]);
    expect(stats.rewardMean).toBeCloseTo(3.5, 12);
  });
});

describe('TRL frac_reward_zero_std with one generation per prompt', () => {
  it('a one-row group has std 0 and is counted (num_generations_eval = 1, L2687-2693, L2708)', () => {
    const { advantages, stats } = groupAdvantagesSync(f32([1, 0, NaN, 3]), { groupSize: 1 });
    expectClose(advantages, [0, 0, 0, 0]);
    expect(stats.fracRewardZeroStd).toBe(1);
    expect(groupAdvantagesSync(f32([1, 0, NaN, 3]), { groupSize: 1, scale: 'none' }).stats.fracRewardZeroStd).toBe(1);
  });

  it('in "batch" mode only a batch of one row has std 0 (L2694-2699); a larger batch uses its global std', () => {
    expect(groupAdvantagesSync(f32([1]), { groupSize: 1, scale: 'batch' }).stats.fracRewardZeroStd).toBe(1);
    expect(groupAdvantagesSync(f32([1, 0, 3]), { groupSize: 1, scale: 'batch' }).stats.fracRewardZeroStd).toBe(0);
  });

  it('a group of several rows with one scorable reward has std NaN, which is not close to 0 (utils.py L876-878)', () => {
    expect(groupAdvantagesSync(f32([1, NaN, 2, 2]), { groupSize: 2 }).stats.fracRewardZeroStd).toBe(0.5);
  });

  it('a one-row group among id groups (verl uid) is counted the same way', () => {
    const { stats } = groupAdvantagesSync(f32([1, 0, 5]), { groupIds: Int32Array.of(0, 0, 1) });
    expect(stats.fracRewardZeroStd).toBeCloseTo(1 / 3, 12);
  });
});

describe('reward weights with one reward function', () => {
  it('weight 2 doubles the reward: unscaled advantages and reward stats double (L2683, L2746-2749)', () => {
    // rewards = R * 2 = [2, 0, 0, 2]; scale "none": A = r - mean = [1, -1, -1, 1]; reward 1, reward_std 1.1547.
    const { advantages, stats } = groupAdvantagesSync(f32([1, 0, 0, 1]), { groupSize: 4, scale: 'none', rewardWeights: [2] });
    expectClose(advantages, [1, -1, -1, 1]);
    expect(stats.rewardMean).toBeCloseTo(1, 12);
    expect(stats.rewardStd).toBeCloseTo(1.1547005, 6);
  });

  it('with group scaling only the epsilon sees the weight: (2r - mean) / (std + 1e-4)', () => {
    const { advantages } = groupAdvantagesSync(f32([1, 0, 0, 1]), { groupSize: 4, rewardWeights: [2] });
    expectClose(advantages, [0.86595041, -0.86595041, -0.86595041, 0.86595041]);
  });
});
