// One comparison helper for every parity test: |actual − expected| <= atol + rtol·|expected|,
// NaN and ±Infinity must match exactly, and a failure lists the first five mismatching indices.
import { expect } from 'vitest';

type Numbers = ArrayLike<number>;

export function mismatches(actual: Numbers, expected: Numbers, atol: number, rtol: number): string[] {
  const found: string[] = [];
  if (actual.length !== expected.length) return [`length ${actual.length} != ${expected.length}`];
  for (let i = 0; i < actual.length && found.length < 5; i++) {
    const a = actual[i];
    const e = expected[i];
    const bothSpecial = !Number.isFinite(a) || !Number.isFinite(e);
    const ok = bothSpecial ? Object.is(a, e) || (Number.isNaN(a) && Number.isNaN(e)) : Math.abs(a - e) <= atol + rtol * Math.abs(e);
    if (!ok) found.push(`[${i}] got ${a}, expected ${e}`);
  }
  return found;
}

export function expectClose(actual: Numbers, expected: Numbers, { atol = 1e-6, rtol = 1e-5 } = {}): void {
  expect(mismatches(actual, expected, atol, rtol)).toEqual([]);
}
