// The predicted informative-group fraction 1 − Σ_c p_c^S from per-prompt correct rates, against hand
// computations, and its small-S bias on simulated groups.
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../lib/data/rng.js';
import { countDistribution, predictedInformative } from '../lib/eval/diagnostics.js';
import { GrpoError } from '../lib/errors.js';
import { informativeGroups } from '../lib/rewards/ccr.js';

describe('countDistribution', () => {
  it('is the Poisson-binomial distribution of the number correct', () => {
    // rates 0.5, 0.2: p0 = 0.5·0.8, p1 = 0.5·0.8 + 0.5·0.2, p2 = 0.5·0.2
    expect(Array.from(countDistribution([0.5, 0.2]))).toEqual([0.4, 0.5, 0.1].map((v) => expect.closeTo(v, 12)));
    expect(Array.from(countDistribution([]))).toEqual([1]);
  });
});

describe('predictedInformative', () => {
  it('single problems: 1 − q^S − (1 − q)^S with q the group\'s correct rate, averaged over groups', () => {
    // [groups=2, S=4, N=1]: group 0 has 1 of 4 right (q = 1/4), group 1 all right (q = 1)
    const correct = [1, 0, 0, 0, 1, 1, 1, 1];
    const group0 = 1 - 0.25 ** 4 - 0.75 ** 4; // 0.68359375
    expect(predictedInformative(correct, 2, 4, 1)).toBeCloseTo((group0 + 0) / 2, 12);
  });

  it('packed problems: the count distribution of the per-problem rates, raised to S', () => {
    // [groups=1, S=2, N=2]: problem 1 right in both candidates (q1 = 1), problem 2 in one (q2 = 1/2)
    // counts: p1 = 1/2, p2 = 1/2 → 1 − (1/4 + 1/4) = 1/2; the candidates' counts (2 and 1) differ: observed 1
    expect(predictedInformative([1, 1, 1, 0], 1, 2, 2)).toBeCloseTo(0.5, 12);
    // [groups=1, S=3, N=3], rates 2/3, 1/3, 0: p0 = 1/3·2/3 = 2/9, p1 = 2/3·2/3 + 1/3·1/3 = 5/9, p2 = 2/9
    const correct = [1, 0, 0, 1, 1, 0, 0, 0, 0];
    const same = (2 / 9) ** 3 + (5 / 9) ** 3 + (2 / 9) ** 3;
    expect(predictedInformative(correct, 1, 3, 3)).toBeCloseTo(1 - same, 12);
  });

  it('single problems at small S: the plug-in lies below the truth (1 − q^S − (1 − q)^S is concave), the observed fraction does not', () => {
    const random = mulberry32(5);
    const [groups, S, q] = [4000, 4, 0.3];
    const correct = Uint8Array.from({ length: groups * S }, () => (random() < q ? 1 : 0));
    const truth = 1 - q ** S - (1 - q) ** S; // 0.7518
    const predicted = predictedInformative(correct, groups, S, 1);
    expect(predicted).toBeLessThan(truth - 0.1);
    expect(Math.abs(informativeGroups(correct, S).fraction - truth)).toBeLessThan(0.03);
  });

  it('is NaN for no groups and refuses a wrong shape', () => {
    expect(predictedInformative([], 0, 4, 1)).toBeNaN();
    expect(() => predictedInformative([1, 0, 1], 1, 2, 2)).toThrow(GrpoError);
  });
});
