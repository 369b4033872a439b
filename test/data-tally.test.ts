// The running summaries of `grpo data validate` against the plain sorted-array reference, on random and
// adversarial inputs (repeats, one value, empty, fractions).
import { describe, expect, it } from 'vitest';
import { Counts, Tally } from '../lib/data/tally.js';
import { mulberry32 } from '../lib/data/rng.js';

function reference(values: readonly number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    min: sorted[0] ?? 0,
    median: sorted[Math.floor(sorted.length / 2)] ?? 0,
    mean: sorted.reduce((a, b) => a + b, 0) / Math.max(sorted.length, 1),
    max: sorted[sorted.length - 1] ?? 0,
  };
}

describe('Tally', () => {
  const random = mulberry32(7);
  const cases: number[][] = [
    [],
    [5],
    [2, 2, 2, 2],
    [1, 2],
    [3, 1, 2],
    [0.5, 0.25, 101, 0.5],
    ...Array.from({ length: 50 }, (_, i) => Array.from({ length: 1 + Math.floor(random() * 400) }, () => Math.floor(random() * (i % 2 ? 5 : 1000)))),
  ];
  it.each(cases.map((c) => [c.length, c] as const))('matches the sorted reference on %i values', (_, values) => {
    const tally = new Tally();
    values.forEach((v) => tally.add(v));
    const { mean, ...rest } = tally.summary();
    const { mean: expectedMean, ...expected } = reference(values);
    expect(rest).toEqual(expected);
    expect(mean).toBeCloseTo(expectedMean, 12);
    expect(tally.count).toBe(values.length);
  });
});

describe('Counts', () => {
  it('counts labels, including ones that are Object.prototype names', () => {
    const counts = new Counts();
    for (const label of ['train', '__proto__', 'train', 'constructor']) counts.add(label);
    expect(counts.summary()).toEqual(Object.fromEntries([['train', 2], ['__proto__', 1], ['constructor', 1]]));
  });
});
