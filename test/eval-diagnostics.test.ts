import { describe, expect, it } from 'vitest';
import {
  answersCompleted,
  ccrSignal,
  compareZeroRewards,
  respondentRewards,
  respondentVarianceShare,
  zeroRewardFractions,
} from '../lib/eval/diagnostics.js';
import { renderItems } from '../lib/rewards/index.js';
import { GrpoError } from '../lib/errors.js';

const heat = { title: 'Heat', year: 1995 };
const up = { title: 'Up', year: 2009 };
const alien = { title: 'Alien', year: 1979 };
const list = (...films: (typeof heat)[]) => renderItems(films);

describe('zero-reward fractions', () => {
  it('hand-computed cells and requests', () => {
    // [groups=2, candidates=2, ranks=3]: group 0 earns only at rank 1; group 1 earns nothing
    const rewards = new Float32Array([0, 1, 0, /**/ 0, 0, 0, /**/ 0, 0, 0, /**/ 0, 0, 0]);
    expect(zeroRewardFractions(rewards, 2, 2, 3)).toEqual({ cells: 5 / 6, requests: 1 / 2 });
  });

  it('respondent-row rewards leave more groups silent than union rewards', () => {
    const requests = [
      { respondents: [{ items: [alien] }, { items: [heat] }] },
      { respondents: [{ items: [up] }] },
    ];
    const completions = [
      [list(heat, up), list(up, heat)],
      [list(up), list(heat)],
    ];
    // respondent 0 drawn for both groups: group 0 earns nothing (its lists name Heat, not Alien)
    const { respondent, union } = compareZeroRewards(completions, requests, { k: 2 });
    expect(respondent).toEqual({ cells: 3 / 4, requests: 1 / 2 });
    expect(union).toEqual({ cells: 1 / 4, requests: 0 });
    expect(compareZeroRewards(completions, requests, { k: 2, respondents: [1, 0] }).respondent).toEqual(union);
    // default K = 20: ranks 3..20 are empty in every list
    expect(compareZeroRewards(completions, requests).union).toEqual({ cells: 1 - 3 / 40, requests: 0 });
  });

  it('rejects a wrong shape', () => {
    expect(() => zeroRewardFractions(new Float32Array(5), 1, 2, 3)).toThrow(/shape/);
    expect(() => zeroRewardFractions([0] as unknown as Float32Array, 1, 1, 1)).toThrow(GrpoError);
  });
});

describe('respondent variance share', () => {
  it('is 1 when the lists are fixed and only the respondent varies', () => {
    // respondent 0 likes list 0, respondent 1 likes list 1: the mean advantage over the draw is 0
    const rewards = respondentRewards([list(heat), list(up)], { respondents: [{ items: [heat] }, { items: [up] }] }, { k: 1 });
    expect(Array.from(rewards)).toEqual([1, 0, 0, 1]);
    const share = respondentVarianceShare([rewards, rewards], 2, 1, { resamples: 200 });
    expect(share.estimate).toBeCloseTo(1, 12);
    expect(share.low).toBeCloseTo(1, 12);
    expect(share.high).toBeCloseTo(1, 12);
  });

  it('is 0 when all respondents agree', () => {
    const request = { respondents: [{ items: [heat, up] }, { items: [up, heat] }, { items: [heat, up] }] };
    const rewards = respondentRewards([list(heat, alien), list(alien, up), list(alien)], request, { k: 2 });
    const share = respondentVarianceShare([rewards], 3, 2);
    expect(share.estimate).toBe(0);
    expect([share.low, share.high]).toEqual([0, 0]);
  });

  it('hand-computed one half; single-respondent requests are left out', () => {
    // [respondents=2, candidates=2, ranks=1]: advantages (centred only) r0 [0.5, −0.5], r1 [0, 0]
    // within = 4·0.25² = 0.25, total = 2·0.5² = 0.5
    const two = new Float32Array([1, 0, 1, 1]);
    const one = new Float32Array([1, 0]);
    const share = respondentVarianceShare([two, one], 2, 1, { scale: 'none' });
    expect(share.estimate).toBeCloseTo(0.5, 12);
    expect(share.requests).toBe(1);
    expect(Array.from(share.series.sum)).toEqual([0.25]);
  });

  it('rejects bad shapes and options', () => {
    expect(() => respondentVarianceShare([new Float32Array(3)], 2, 1)).toThrow(/shape/);
    expect(() => respondentVarianceShare([], 1, 1)).toThrow(GrpoError);
    expect(() => respondentVarianceShare([], 2, 1, { scal: 'none' } as object)).toThrow(/did you mean "scale"/);
  });
});

describe('CCR signal', () => {
  it('observed and predicted informative fractions', () => {
    // groups of S = 2: (0, 0), (1, 2), (2, 2) → 1 of 3 informative; p = [2/6, 1/6, 3/6]
    const signal = ccrSignal(new Int32Array([0, 0, 1, 2, 2, 2]), 2);
    expect(signal.informative).toBeCloseTo(1 / 3, 12);
    expect(signal.distribution).toEqual([2 / 6, 1 / 6, 3 / 6]);
    expect(signal.predicted).toBeCloseTo(1 - (1 / 9 + 1 / 36 + 1 / 4), 12);
  });

  it('answers completed before the cap', () => {
    const full = 'Answer 1: \\boxed{1}\nAnswer 2: \\boxed{2}\nAnswer 3: \\boxed{3}';
    const cut = 'Answer 1: \\boxed{1}\nAnswer 2: \\boxed{2';
    const all = answersCompleted([full, cut, ''], 3);
    expect(all.histogram).toEqual([1, 1, 0, 1]);
    expect(all.mean).toBeCloseTo(4 / 3, 12);
    const capped = answersCompleted([full, cut, ''], 3, [false, true, true]);
    expect(capped).toEqual({ histogram: [1, 1, 0, 0], mean: 0.5, completions: 2 });
    expect(() => answersCompleted([full], 3, [true, false])).toThrow(/shape/);
  });
});
