import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Catalog, formatCatalogIndex, type TitleYear } from '../lib/text/catalog.js';
import { renderItems } from '../lib/rewards/items.js';
import { lengthReward } from '../lib/rewards/length.js';
import { rankRewards, rankRewardsBatch, type RankRewardOptions, type RewardRequest } from '../lib/rewards/recommend.js';
import { dcgDiscount } from '../lib/rewards/shapes.js';

const tv9Catalog = Catalog.fromEntries([
  { title: 'Inception', year: 2010 },
  { title: 'Heat', year: 1995 },
  { title: 'Alien', year: 1979 },
  { title: 'The Matrix', year: 1999 },
  { title: 'Y', year: 2000 },
]);
const tv9Request: RewardRequest = {
  respondents: [{ items: [{ title: 'Inception', year: 2010 }, { title: 'Heat', year: 1995 }] }],
};
const tv9Text = 'Heat (1995)\nAlien (1979)\nInception (2010)\nThe Matrix (1999)\nY (2000)';

const close = (actual: Float32Array, expected: number[]) => {
  expect(actual.length).toBe(expected.length);
  actual.forEach((v, i) => expect(v).toBeCloseTo(expected[i], 6));
};

describe('rankRewards', () => {
  for (const mode of ['rankGrpo', 'default'] as const) {
    it(`TV9: exp_inf (hit) and log_decay (dcgTail), ${mode} mode`, () => {
      const base: RankRewardOptions = { k: 5, mode, catalog: tv9Catalog, target: 'respondent' };
      close(rankRewards(tv9Text, tv9Request, { ...base, shape: 'hit' }).rewards, [1, 0, 1, 0, 0]);
      close(rankRewards(tv9Text, tv9Request, { ...base, shape: 'dcgTail' }).rewards, [1.5, 0.5, 0.5, 0, 0]);
      close(rankRewards('Heat (1995)', tv9Request, { ...base, shape: 'hit' }).rewards, [1, 0, 0, 0, 0]);
    });
  }

  it('TV9 discounts', () => {
    close(Float32Array.from([0, 1, 2, 3, 4], dcgDiscount), [1, 0.6309298, 0.5, 0.4306766, 0.3868528]);
  });

  const multi: RewardRequest = {
    seen: ['Alien'],
    respondents: [
      { items: [{ title: 'Heat', year: 1995 }, { title: 'Up', year: 2009 }] },
      { items: [{ title: 'heat', year: 1995 }] },
      { items: [{ title: 'The Matrix', year: 1999 }] },
    ],
  };
  const text = '1. Heat (1995)\n2. Alien (1979)\n3. Matrix, The (1999)\n4. Up (2009)\n5. Heat (1995)\n6. Inception';

  it('union, mean and respondent targets on a three-respondent request', () => {
    close(rankRewards(text, multi, { k: 6 }).rewards, [1, 0, 1, 1, 0, 0]);
    close(rankRewards(text, multi, { k: 6, target: 'mean' }).rewards, [2 / 3, 0, 1 / 3, 1 / 3, 0, 0]);
    close(rankRewards(text, multi, { k: 6, target: 'respondent', respondent: 2 }).rewards, [0, 0, 1, 0, 0, 0]);
  });

  it('reports invalid items by reason, skipped lines and the length reward', () => {
    const result = rankRewards(`Sure!\n${text}`, multi, { k: 6, catalog: tv9Catalog });
    expect(result.invalid).toEqual({ format: 1, seen: 1, notInCatalog: 1, duplicate: 1 });
    expect(result.reasons).toEqual([null, 'seen', null, 'notInCatalog', 'duplicate', 'format']);
    expect(result.skippedLines).toBe(1);
    expect(result.length).toBeCloseTo(lengthReward(5, 6), 6);
  });

  it('rejects bad options and an out-of-range respondent with GrpoError', () => {
    expect(() => rankRewards(text, multi, { shpe: 'hit' } as RankRewardOptions)).toThrow(/did you mean "shape"/);
    expect(() => rankRewards(text, multi, { target: 'respondent', respondent: 3 })).toThrow(/respondent in \[0, 2\]/);
    expect(() => rankRewards(text, { respondents: [] })).toThrow(/at least one respondent/);
  });

  it('property: union rewards ≥ each respondent\'s rewards ≥ 0, and mean lies between', () => {
    const titles = ['Heat', 'Up', 'Alien', 'X', 'the x', 'Matrix'];
    const item = fc.record({ title: fc.constantFrom(...titles), year: fc.integer({ min: 1995, max: 2001 }) });
    const request = fc.array(fc.record({ items: fc.array(item, { minLength: 1, maxLength: 5 }) }), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(request, fc.array(item, { maxLength: 12 }), fc.constantFrom('hit', 'dcgTail'), (respondents, recs, shape) => {
        const req = { respondents };
        const completion = renderItems(recs);
        const options = { k: 10, shape: shape as 'hit' | 'dcgTail' };
        const union = rankRewards(completion, req, options).rewards;
        const mean = rankRewards(completion, req, { ...options, target: 'mean' }).rewards;
        respondents.forEach((_, r) => {
          const own = rankRewards(completion, req, { ...options, target: 'respondent', respondent: r }).rewards;
          own.forEach((v, k) => expect(union[k]).toBeGreaterThanOrEqual(v - 1e-6));
        });
        mean.forEach((v, k) => expect(union[k]).toBeGreaterThanOrEqual(v - 1e-6));
      }),
      { seed: 11, numRuns: 400 },
    );
  });
});

describe('rankRewardsBatch', () => {
  it('fills [groups, candidates, ranks] in row-major order with per-group respondents', () => {
    const requests: RewardRequest[] = [tv9Request, { respondents: [{ items: [] }, { items: [{ title: 'Up', year: 2009 }] }] }];
    const completions = [
      [tv9Text, 'Heat (1995)'],
      ['Up (2009)', 'Nope (1990)\nUp (2009)'],
    ];
    const batch = rankRewardsBatch(completions, requests, { k: 3, target: 'respondent', respondents: [0, 1] });
    close(batch.rewards, [1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 0]);
    close(batch.length, [lengthReward(5, 3), lengthReward(1, 3), lengthReward(1, 3), lengthReward(2, 3)]);
    expect(batch.results).toHaveLength(4);
  });

  it('rejects ragged groups and a respondents array of the wrong length', () => {
    expect(() => rankRewardsBatch([['a'], ['b', 'c']], [tv9Request, tv9Request])).toThrow(/completions\[1\] of shape \[candidates\]/);
    expect(() => rankRewardsBatch([['a']], [tv9Request], { respondents: [0, 0] })).toThrow(/respondents of shape \[groups\]/);
  });
});

describe('lengthReward', () => {
  it('is 0 at exactly K, −1/K per missing or extra item, floored at −1', () => {
    expect([0, 10, 19, 20, 21, 40, 60].map((n) => lengthReward(n, 20))).toEqual([-1, -0.5, -0.05, 0, -0.05, -1, -1]);
    expect(() => lengthReward(-1, 20)).toThrow(/count >= 0/);
  });
});

describe('Catalog', () => {
  it('merges entries with the same normalised key and round-trips through the compact index', () => {
    const entries: TitleYear[] = [{ title: 'The Matrix', year: 1999 }, { title: 'Matrix, The', year: 1999 }, { title: 'Up', year: 2009 }];
    const catalog = Catalog.fromEntries(entries);
    expect(catalog.size).toBe(2);
    expect(catalog.has('MATRIX', 1999)).toBe(true);
    expect(catalog.has('The Matrix', 1999, 'none')).toBe(true);
    const compact = Catalog.fromIndex(formatCatalogIndex(entries));
    expect(compact.size).toBe(2);
    expect(compact.has('the matrix!', 1999)).toBe(true);
    expect(compact.has('Up', 2010)).toBe(false);
    expect(() => compact.has('Up', 2009, 'none')).toThrow(/cannot answer "none" lookups/);
  });
});
