// Group and rank-wise advantages against the upstream vectors (TV1–TV8), the float64 reference,
// properties (fast-check) and bad input.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupAdvantages, groupAdvantagesSync, rankAdvantagesSync } from '../lib/kernels/advantage.js';
import { groupsOf, normalizeGroupsReference, rankCellsOf } from '../lib/reference/advantage.js';
import { setThreads } from '../lib/runtime.js';
import { TV1, TV1_REWARDS, TV2, TV3, TV4, TV5, TV6, TV7, TV8 } from './fixtures/grpo-vectors.js';
import { expectClose } from './helpers/close.js';
import { codeOf } from './helpers/errors.js';

const f32 = (xs: readonly number[]) => Float32Array.from(xs);
const verl = { stdEpsilon: 1e-6, singletonGroup: 'raw' } as const;

describe('group advantages (TRL, verl)', () => {
  it('TV1: TRL group scaling with a zero-std group', () => {
    const { advantages, stats } = groupAdvantagesSync(f32(TV1_REWARDS), { groupSize: 4 });
    expectClose(advantages, TV1.advantages);
    expect(stats.fracRewardZeroStd).toBe(TV1.fracZeroStd);
    expect(stats.rewardMean).toBeCloseTo(0.5, 12);
  });

  it('TV2: TRL batch std is the global std, not the group std (peer-landscape §C.1, TRL #3991)', () => {
    const { advantages, stats } = groupAdvantagesSync(f32(TV1_REWARDS), { groupSize: 4, scale: 'batch' });
    expectClose(advantages, TV2.advantages);
    expect(stats.fracRewardZeroStd).toBe(TV2.fracZeroStd);
    expect(stats.rewardStd).toBeCloseTo(0.3779645, 6);
  });

  it('TV3: no scaling (TRL "none", verl norm_adv_by_std_in_grpo=False, Dr. GRPO; peer-landscape §C.1)', () => {
    const { advantages, stats } = groupAdvantagesSync(f32(TV1_REWARDS), { groupSize: 4, scale: 'none' });
    expectClose(advantages, TV3.advantages);
    expect(stats.fracRewardZeroStd).toBe(TV3.fracZeroStd);
  });

  it('TV4: verl GRPO with uid groups and eps 1e-6', () => {
    const { advantages } = groupAdvantagesSync(f32(TV1_REWARDS), { groupIds: Int32Array.from(TV4.groupIds), ...verl });
    expectClose(advantages, TV4.advantages);
  });

  it('TV5: singleton group policies (verl raw, TRL zero, Rank-GRPO NaN)', () => {
    const ids = Int32Array.from(TV5.groupIds);
    expectClose(groupAdvantagesSync(f32(TV5.rewards), { groupIds: ids, ...verl }).advantages, TV5.verlNorm);
    expectClose(groupAdvantagesSync(f32(TV5.rewards), { groupIds: ids, ...verl, scale: 'none' }).advantages, TV5.verlNoNorm);
    expectClose(groupAdvantagesSync(f32([2]), { groupSize: 1 }).advantages, [0]);
    expect(Number.isNaN(groupAdvantagesSync(f32([2]), { groupSize: 1, singletonGroup: 'nan' }).advantages[0])).toBe(true);
  });

  it('TV6: TRL unscorable rows leave the statistics and get 0', () => {
    expectClose(groupAdvantagesSync(f32(TV6.rewards), { groupSize: 4 }).advantages, TV6.advantages);
    expectClose(groupAdvantagesSync(f32(TV6.allButOneNan), { groupSize: 4 }).advantages, [0, 0, 0, 0]);
    const asZero = groupAdvantagesSync(f32(TV6.rewards), { groupSize: 4, nanRewards: 'asZero' }).advantages;
    expectClose(asZero, normalizeGroupsReference([1, 0, 0, 0], [[0, 1, 2, 3]], { scale: 'group', stdEpsilon: 1e-4, singletonGroup: 'zero', nanRewards: 'exclude' }).advantages);
  });

  it('TV7: TRL multi-objective sum-then-normalize and normalize-then-sum', () => {
    const base = { groupSize: 4, objectives: 2 } as const;
    expectClose(groupAdvantagesSync(f32(TV7.rewards), base).advantages, TV7.sumThenNormalize);
    expectClose(groupAdvantagesSync(f32(TV7.rewards), { ...base, multiObjective: 'normalizeThenSum' }).advantages, TV7.normalizeThenSum);
    const weighted = groupAdvantagesSync(f32(TV7.rewards), { ...base, rewardWeights: [2, 0] }).advantages;
    expectClose(weighted, groupAdvantagesSync(f32([2, 0, 2, 0]), { groupSize: 4 }).advantages);
  });

  it('the Promise form gives the same advantages and rejects bad input', async () => {
    const sync = groupAdvantagesSync(f32(TV1_REWARDS), { groupSize: 4 });
    expect((await groupAdvantages(f32(TV1_REWARDS), { groupSize: 4 })).advantages).toEqual(sync.advantages);
    await expect(groupAdvantages(f32(TV1_REWARDS), { groupSize: 3 })).rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH' });
  });
});

describe('rank-wise advantages (Rank-GRPO)', () => {
  it('TV8: per-rank normalisation across the candidates', () => {
    const shape = { candidates: 4, ranks: 3 };
    const { advantages, stats } = rankAdvantagesSync(f32(TV8.rewards), shape);
    expectClose(advantages, TV8.advantages);
    expectClose(rankAdvantagesSync(f32(TV8.rewards), { ...shape, scale: 'none' }).advantages, TV8.unscaled);
    expect(stats.fracCellsEqual).toBe(0);
    expect(stats.fracCellsZero).toBe(0);
  });

  it('a rank column with equal rewards gives 0, and the cell fractions count equal and all-zero cells', () => {
    // rewards [G=2, S=2, K=2]: group 0 rank 1 all 1, group 1 both ranks all 0
    const { advantages, stats } = rankAdvantagesSync(f32([1, 1, 0, 1, 0, 0, 0, 0]), { candidates: 2, ranks: 2 });
    expectClose(advantages, [0.7070068, 0, -0.7070068, 0, 0, 0, 0, 0]);
    expect(stats.fracCellsEqual).toBe(0.75);
    expect(stats.fracCellsZero).toBe(0.5);
  });

  it('matches the float64 reference on random rewards (G = 5, S = 8, K = 20)', () => {
    const rewards = Float32Array.from({ length: 5 * 8 * 20 }, (_, i) => Math.sin(i * 12.9898) > 0.3 ? 1 : 0);
    const o = { scale: 'group', stdEpsilon: 1e-4, singletonGroup: 'nan', nanRewards: 'asZero' } as const;
    const expected = normalizeGroupsReference(rewards, rankCellsOf(5, 8, 20), o).advantages;
    expectClose(rankAdvantagesSync(rewards, { candidates: 8, ranks: 20, ...o }).advantages, expected);
  });
});

const rewardArrays = (groups: number, size: number) =>
  fc.array(fc.oneof(fc.float({ min: -10, max: 10, noNaN: true }), fc.constant(1), fc.constant(0)), {
    minLength: groups * size, maxLength: groups * size,
  }).map((xs) => Float32Array.from(xs));

describe('advantage properties (fast-check)', () => {
  const cases = fc.tuple(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 2, max: 9 })).chain(([g, s]) =>
    fc.tuple(fc.constant(s), rewardArrays(g, s)));

  it('with scale "none" the advantages of each group sum to zero', () => {
    fc.assert(fc.property(cases, ([size, rewards]) => {
      const { advantages } = groupAdvantagesSync(rewards, { groupSize: size, scale: 'none' });
      for (let g = 0; g < rewards.length; g += size) {
        const sum = advantages.subarray(g, g + size).reduce((s, a) => s + a, 0);
        const scale = rewards.subarray(g, g + size).reduce((s, r) => s + Math.abs(r), 0);
        expect(Math.abs(sum)).toBeLessThanOrEqual(1e-5 * (1 + scale));
      }
    }), { seed: 3, numRuns: 200 });
  });

  it('advantages are invariant to adding a constant to a group', () => {
    fc.assert(fc.property(cases, fc.integer({ min: -4, max: 4 }), ([size, rewards], shift) => {
      const shifted = rewards.map((r, i) => (i < size ? r + shift : r));
      const a = groupAdvantagesSync(rewards, { groupSize: size }).advantages;
      const b = groupAdvantagesSync(shifted, { groupSize: size }).advantages;
      expectClose(b, a, { atol: 2e-3, rtol: 1e-3 });
    }), { seed: 4, numRuns: 200 });
  });

  it('matches the float64 reference for every scale, singleton and NaN policy', () => {
    const options = fc.record({
      scale: fc.constantFrom('group', 'batch', 'none'),
      stdEpsilon: fc.constantFrom(1e-4, 1e-6, 0.5),
      singletonGroup: fc.constantFrom('zero', 'raw', 'nan'),
      nanRewards: fc.constantFrom('exclude', 'asZero'),
    } as const);
    const withNaN = fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 6 })).chain(([g, s]) =>
      fc.tuple(fc.constant(s), fc.array(fc.oneof(fc.constant(NaN), fc.integer({ min: -3, max: 3 })), { minLength: g * s, maxLength: g * s })));
    fc.assert(fc.property(withNaN, options, ([size, xs], o) => {
      const rewards = Float32Array.from(xs);
      const expected = normalizeGroupsReference(rewards, groupsOf(rewards.length, size), o);
      const { advantages, stats } = groupAdvantagesSync(rewards, { groupSize: size, ...o });
      expectClose(advantages, expected.advantages, { atol: 1e-5, rtol: 1e-5 });
      expect(stats.fracRewardZeroStd).toBeCloseTo(expected.fracZeroStd, 12);
    }), { seed: 5, numRuns: 300 });
  });

  it('index grouping equals contiguous grouping after a permutation of rows', () => {
    fc.assert(fc.property(cases, ([size, rewards]) => {
      const order = Array.from(rewards, (_, i) => i).reverse();
      const ids = Int32Array.from(order, (i) => Math.floor(i / size));
      const permuted = Float32Array.from(order, (i) => rewards[i]);
      const byIds = groupAdvantagesSync(permuted, { groupIds: ids }).advantages;
      const contiguous = groupAdvantagesSync(rewards, { groupSize: size }).advantages;
      expect(Array.from(order, (i) => contiguous[i])).toEqual(Array.from(byIds));
    }), { seed: 6, numRuns: 100 });
  });

  it('results are bitwise equal for 1 and 2 threads', () => {
    const rewards = Float32Array.from({ length: 65536 }, (_, i) => Math.cos(i * 0.37));
    setThreads(1);
    const one = groupAdvantagesSync(rewards, { groupSize: 16 }).advantages;
    setThreads(2);
    const two = groupAdvantagesSync(rewards, { groupSize: 16 }).advantages;
    setThreads(0);
    expect(Buffer.from(two.buffer).equals(Buffer.from(one.buffer))).toBe(true);
  });
});

describe('advantage errors', () => {

  it('gives typed errors for bad shapes, values and options', () => {
    expect(codeOf(() => groupAdvantagesSync(f32([1, 2, 3]), { groupSize: 2 }))).toBe('GRPO_SHAPE_MISMATCH');
    expect(codeOf(() => groupAdvantagesSync(f32([1, 2]), { groupSize: -2 }))).toBe('GRPO_VALUE_RANGE');
    expect(codeOf(() => groupAdvantagesSync(f32([1, Infinity]), { groupSize: 2 }))).toBe('GRPO_NON_FINITE');
    expect(codeOf(() => groupAdvantagesSync(f32([1, 2]), { groupIds: Int32Array.of(0, -1) }))).toBe('GRPO_INDEX_RANGE');
    expect(codeOf(() => groupAdvantagesSync(f32([1, 2]), { groupIds: Int32Array.of(0) }))).toBe('GRPO_SHAPE_MISMATCH');
    expect(codeOf(() => groupAdvantagesSync(f32([1, 2]), { scale: 'global' as 'group' }))).toBe('GRPO_VALUE_RANGE');
    expect(codeOf(() => groupAdvantagesSync(f32([1, 2]), { groupSise: 2 } as object))).toBe('GRPO_UNKNOWN_OPTION');
    expect(codeOf(() => groupAdvantagesSync([1, 2] as unknown as Float32Array))).toBe('GRPO_INVALID_ARGUMENT');
    expect(codeOf(() => rankAdvantagesSync(f32([1, 2, 3]), { candidates: 2, ranks: 2 }))).toBe('GRPO_SHAPE_MISMATCH');
    expect(codeOf(() => groupAdvantagesSync(f32([1, 2, 3, 4]), { groupSize: 2, objectives: 2, rewardWeights: [1] }))).toBe('GRPO_SHAPE_MISMATCH');
  });
});
