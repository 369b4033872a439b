import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bootstrap, pairedBootstrap, quantileSorted, ratioOf, resampleRatios, seriesOf, type RequestSeries } from '../lib/eval/bootstrap.js';
import { mulberry32 } from '../lib/data/rng.js';
import { GrpoError } from '../lib/errors.js';

function coinFlips(n: number, p: number, seed: number): RequestSeries {
  const random = mulberry32(seed);
  return seriesOf(Array.from({ length: n }, () => (random() < p ? 1 : 0)));
}

/** Plain reference: draw the same indices, build the resampled arrays, take the ratio. */
function referenceDraws(series: RequestSeries, resamples: number, seed: number): number[] {
  const random = mulberry32(seed);
  const n = series.sum.length;
  return Array.from({ length: resamples }, () => {
    const drawn = Array.from({ length: n }, () => Math.floor(random() * n));
    return ratioOf({ sum: Float64Array.from(drawn, (i) => series.sum[i]), count: Float64Array.from(drawn, (i) => series.count[i]) });
  });
}

describe('bootstrap', () => {
  it('the interval of a constant is a point', () => {
    const [interval] = bootstrap([seriesOf(new Array(50).fill(0.37))]);
    expect(interval.low).toBe(interval.estimate);
    expect(interval.high).toBe(interval.estimate);
    expect(interval.estimate).toBeCloseTo(0.37, 12);
    expect(interval.resamples).toBe(2000);
  });

  it('intervals shrink as requests grow', () => {
    const widths = [100, 1000, 10000].map((n) => {
      const [interval] = bootstrap([coinFlips(n, 0.3, 7)], { resamples: 500 });
      return interval.high - interval.low;
    });
    expect(widths[1]).toBeLessThan(widths[0]);
    expect(widths[2]).toBeLessThan(widths[1]);
    // √n scaling: 10× the requests → about 1/√10 of the width
    expect(widths[2] / widths[0]).toBeGreaterThan(0.05);
    expect(widths[2] / widths[0]).toBeLessThan(0.2);
  });

  it('seeded results are reproducible; another seed differs', () => {
    const data = coinFlips(300, 0.5, 1);
    expect(bootstrap([data], { seed: 11 })).toEqual(bootstrap([data], { seed: 11 }));
    // discrete data can share quantiles across seeds; the draws themselves differ
    expect(resampleRatios([data], { seed: 12 })[0]).not.toEqual(resampleRatios([data], { seed: 11 })[0]);
  });

  it('draws equal the plain reference (ratio of resampled sums)', () => {
    const data = { sum: Float64Array.from([3, 0, 2, 5, 1]), count: Float64Array.from([4, 1, 2, 5, 3]) };
    const fast = resampleRatios([data], { resamples: 200, seed: 5 })[0];
    referenceDraws(data, 200, 5).forEach((v, i) => expect(fast[i]).toBeCloseTo(v, 12));
  });

  it('a ratio metric keeps the rows of a request together', () => {
    // rows metric: request A has 3 rows (all 1), request B 1 row (0) → estimate 3/4
    const [interval] = bootstrap([{ sum: Float64Array.from([3, 0]), count: Float64Array.from([3, 1]) }], { resamples: 4000 });
    expect(interval.estimate).toBe(0.75);
    // possible resamples: {A,A} → 1, {A,B} → 0.75, {B,B} → 0; the 95% interval spans them
    expect(interval.low).toBe(0);
    expect(interval.high).toBe(1);
  });

  it('contains the true mean about 95% of the time (property, fixed seed)', () => {
    let covered = 0;
    const trials = 200;
    for (let t = 0; t < trials; t++) {
      const [interval] = bootstrap([coinFlips(200, 0.4, 1000 + t)], { resamples: 400, seed: t });
      if (interval.low <= 0.4 && 0.4 <= interval.high) covered++;
    }
    expect(covered / trials).toBeGreaterThan(0.88);
    expect(covered / trials).toBeLessThan(0.99);
  });

  it('quantileSorted interpolates linearly (numpy default)', () => {
    expect(quantileSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileSorted([1, 2, 3, 4], 0.025)).toBeCloseTo(1.075, 12);
    expect(quantileSorted([5], 0.9)).toBe(5);
  });

  it('rejects bad input with GrpoError', () => {
    expect(() => bootstrap([seriesOf([1])], { resamples: 0 })).toThrow(GrpoError);
    expect(() => bootstrap([seriesOf([1])], { level: 1 })).toThrow(/level/);
    expect(() => bootstrap([seriesOf([1]), seriesOf([1, 2])])).toThrow(/shape/);
    expect(() => bootstrap([{ sum: [1], count: [1] } as unknown as RequestSeries])).toThrow(GrpoError);
  });
});

describe('pairedBootstrap', () => {
  it('a run against itself is exactly zero', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 }), fc.nat(1000), (values, seed) => {
        const run = seriesOf(values);
        const interval = pairedBootstrap(run, run, { resamples: 50, seed });
        return interval.estimate === 0 && interval.low === 0 && interval.high === 0;
      }),
      { seed: 42, numRuns: 100 },
    );
  });

  it('reports the difference in points with its interval; pairing narrows it', () => {
    const random = mulberry32(3);
    // per-request difficulty shared by both runs; B is 5 points better
    const difficulty = Array.from({ length: 400 }, () => random());
    const a = seriesOf(difficulty);
    const b = seriesOf(difficulty.map((v) => v + 0.05));
    const paired = pairedBootstrap(b, a);
    expect(paired.estimate).toBeCloseTo(5, 9);
    expect(paired.high - paired.low).toBeLessThan(1e-9); // identical per-request gaps
    const [ia, ib] = bootstrap([a, b]);
    expect((ib.high - ib.low) * 100).toBeGreaterThan(3); // unpaired: over 3 points wide
    expect(ia.estimate + 0.05).toBeCloseTo(ib.estimate, 12);
  });
});
