import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { curveAt, stepsToTarget, summarizeSeries, trailingMean } from '../lib/eval/curves.js';
import { GrpoError } from '../lib/errors.js';

// B: a slower run validated every 100 steps; A: a faster one validated every 50
const b = [
  { step: 0, value: 0.1, time: 0 },
  { step: 100, value: 0.2, time: 60 },
  { step: 200, value: 0.3, time: 120 },
  { step: 300, value: 0.32, time: 180 },
];
const a = [
  { step: 0, value: 0.1, time: 0 },
  { step: 50, value: 0.18, time: 40 },
  { step: 100, value: 0.26, time: 80 },
  { step: 150, value: 0.34, time: 120 },
];

describe('stepsToTarget', () => {
  it('interpolates between validation points on hand-made curves', () => {
    // B at step 300 is 0.32: A crosses it between 100 (0.26) and 150 (0.34), 3/4 of the way → step 137.5
    const r = stepsToTarget(a, b, 300);
    expect(r.target).toBe(0.32);
    expect(r.stepA).toBeCloseTo(137.5, 9);
    expect(r.ratio).toBeCloseTo(137.5 / 300, 12);
    // elapsed time at the same fraction: 80 + 0.75·40 = 110 s vs B's 180 s
    expect(r.timeA).toBeCloseTo(110, 9);
    expect(r.timeB).toBe(180);
    expect(r.timeRatio).toBeCloseTo(110 / 180, 12);
  });

  it('targets between B’s points are interpolated on B too', () => {
    // B at 150 = 0.25 → A reaches it between 50 (0.18) and 100 (0.26): 50 + 50·0.07/0.08 = 93.75
    const r = stepsToTarget(a, b, 150);
    expect(r.target).toBeCloseTo(0.25, 12);
    expect(r.stepA).toBeCloseTo(93.75, 9);
  });

  it('reached at the first point, never reached, lower-is-better', () => {
    const ahead = a.map((p) => ({ ...p, value: p.value + 0.2 }));
    expect(stepsToTarget(ahead, b, 100).stepA).toBe(0);
    const never = stepsToTarget(b, a, 150);
    expect([never.stepA, never.ratio, never.timeA, never.timeRatio]).toEqual([null, null, null, null]);
    const loss = (curve: typeof a) => curve.map((p) => ({ step: p.step, value: 1 - p.value }));
    expect(stepsToTarget(loss(a), loss(b), 300, { better: 'lower' }).stepA).toBeCloseTo(137.5, 9);
  });

  it('is not defined when the baseline ends no better than it started, e.g. a target of 0', () => {
    // B stays at recall 0: A "reaches" 0 at its first point (step 200 of 1000 used to read as a 0.20 ratio).
    const flat = [{ step: 0, value: 0 }, { step: 500, value: 0 }, { step: 1000, value: 0 }];
    const late = [{ step: 200, value: 0 }, { step: 600, value: 0.1 }];
    const r = stepsToTarget(late, flat, 1000);
    expect(r.target).toBe(0);
    expect([r.defined, r.stepA, r.ratio, r.timeA, r.timeRatio]).toEqual([false, null, null, null, null]);
    expect(stepsToTarget(a, b, 0).defined).toBe(false); // B's own first point
    const worse = [{ step: 0, value: 0.5 }, { step: 100, value: 0.6 }];
    expect(stepsToTarget(a, worse, 100, { better: 'lower' }).defined).toBe(false);
    expect(stepsToTarget(a, b, 300).defined).toBe(true);
  });

  it('no time without time on both curves', () => {
    const untimed = a.map(({ step, value }) => ({ step, value }));
    const r = stepsToTarget(untimed, b, 300);
    expect(r.stepA).toBeCloseTo(137.5, 9);
    expect([r.timeA, r.timeB, r.timeRatio]).toEqual([null, null, null]);
  });

  it('rejects bad curves with GrpoError', () => {
    expect(() => stepsToTarget([], b, 100)).toThrow(GrpoError);
    expect(() => stepsToTarget([{ step: 10, value: 0 }, { step: 5, value: 1 }], b, 100)).toThrow(/strictly increasing/);
    expect(() => stepsToTarget(a, b, 400)).toThrow(/within curve b/);
    expect(() => stepsToTarget(a, b, 100, { better: 'up' } as never)).toThrow(GrpoError);
  });

  it('curveAt is exact on points and linear between', () => {
    expect(curveAt(b, 100)).toEqual({ value: 0.2, time: 60 });
    expect(curveAt(b, 250)?.value).toBeCloseTo(0.31, 12);
    expect(curveAt(b, -1)).toBeUndefined();
  });
});

describe('trailing means and summaries', () => {
  it('uses the available prefix at the start', () => {
    expect(Array.from(trailingMean([2, 4, 6, 8], 3))).toEqual([2, 3, 4, 6]);
  });

  it('equals the plain windowed mean (property, fixed seed)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { maxLength: 300 }), fc.integer({ min: 1, max: 60 }), (values, window) => {
        const fast = trailingMean(values, window);
        return values.every((_, i) => {
          const slice = values.slice(Math.max(0, i - window + 1), i + 1);
          const plain = slice.reduce((s, v) => s + v, 0) / slice.length;
          return Math.abs(fast[i] - plain) <= 1e-9 * (1 + Math.abs(plain));
        });
      }),
      { seed: 7, numRuns: 200 },
    );
  });

  it('defaults to a window of 50', () => {
    const values = Array.from({ length: 120 }, (_, i) => i);
    expect(trailingMean(values)[119]).toBeCloseTo((70 + 119) / 2, 12);
    const summary = summarizeSeries(values);
    expect(summary).toEqual({ first: 24.5, last: 94.5, change: 70, window: 50, length: 120 });
  });

  it('short and empty series', () => {
    expect(summarizeSeries([1, 3], 50)).toEqual({ first: 2, last: 2, change: 0, window: 2, length: 2 });
    expect(Number.isNaN(summarizeSeries([]).first)).toBe(true);
    expect(() => trailingMean([1], 0)).toThrow(GrpoError);
  });
});
