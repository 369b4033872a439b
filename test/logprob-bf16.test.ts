// The fused LM head with bfloat16 hidden/weight (dtype 'bf16') on the CPU: against the float32 path on the
// widened inputs, finite differences, thread-count determinism, the bf16 helpers and the argument errors.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GrpoError } from '../lib/errors.js';
import { fromBf16, toBf16 } from '../lib/kernels/bf16.js';
import {
  linearLogprobs, linearLogprobsBackward, linearLogprobsBackwardSync, linearLogprobsSync,
} from '../lib/kernels/logprob.js';
import { getThreads, setThreads } from '../lib/runtime.js';
import { expectClose } from './helpers/close.js';
import { randomInts, randomNormal } from './helpers/random.js';

/** hidden [T, H], weight [V, H] as bf16 bits, bias [V], targets [T] with an ignored row. */
function problem(rows: number, hidden: number, vocab: number, scale: number, seed: number) {
  const h = toBf16(randomNormal(rows * hidden, scale, seed));
  const w = toBf16(randomNormal(vocab * hidden, scale / Math.sqrt(hidden), seed + 1));
  const bias = randomNormal(vocab, 0.1, seed + 2);
  const targets = randomInts(rows, vocab, seed + 3);
  if (rows > 2) targets[1] = -100;
  return { h, w, bias, targets };
}

const maxAbs = (x: Float32Array) => x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

/** The nearest bfloat16 to x (ties to even), by plain float64 arithmetic on the two neighbours. */
function nearestBf16(x: number): number {
  const f = Math.fround(x);
  if (!Number.isFinite(f) || f === 0) return f;
  const a = Math.abs(f), sign = f < 0 ? -1 : 1;
  const ulp = 2 ** (Math.max(Math.floor(Math.log2(a)), -126) - 7);
  const below = Math.floor(a / ulp) * ulp, above = below + ulp;
  const pick = a - below < above - a ? below : a - below > above - a ? above : (below / ulp) % 2 === 0 ? below : above;
  return sign * (pick >= 2 ** 128 ? Infinity : pick); // -0 for tiny negatives
}

describe('toBf16 / fromBf16', () => {
  it('rounds to nearest, ties to even; keeps NaN, ±Infinity and -0', () => {
    const x = Float32Array.of(1, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, -2, 3.4e38, -Infinity, NaN, -0);
    const bits = toBf16(x);
    expect(Array.from(bits.slice(0, 7))).toEqual([0x3f80, 0x3f80, 0x3f82, 0x3f81, 0xc000, 0x7f80, 0xff80]);
    const back = fromBf16(bits);
    expect(Number.isNaN(back[7])).toBe(true);
    expect(Object.is(back[8], -0)).toBe(true);
  });

  it('gives the nearest bfloat16 of any float (property, fixed seed)', () => {
    fc.assert(fc.property(fc.float({ noNaN: true }), (x) => {
      expect(fromBf16(toBf16(Float32Array.of(x)))[0]).toBe(nearestBf16(x));
    }), { seed: 42, numRuns: 2000 });
  });

  it('round-trips bfloat16 values exactly', () => {
    const bits = Uint16Array.from({ length: 65536 }, (_, i) => i).filter((b) => (b & 0x7f80) !== 0x7f80 || (b & 0x7f) === 0);
    expect(toBf16(fromBf16(bits))).toEqual(bits);
  });
});

describe("linearLogprobs with dtype 'bf16'", () => {
  for (const [rows, hidden, vocab, chunkSize, chunkVocab] of [[9, 24, 50, 4, 16], [33, 64, 1500, 256, 4096], [17, 40, 1037, 5, 384]]) {
    it(`forward equals the float32 path on the widened inputs, T=${rows} H=${hidden} V=${vocab}`, () => {
      const { h, w, bias, targets } = problem(rows, hidden, vocab, 2, rows + vocab);
      const options = { bias, chunkSize, chunkVocab, temperature: 0.7, entropy: true };
      const bf16 = linearLogprobsSync(h, w, targets, { ...options, dtype: 'bf16' });
      const f32 = linearLogprobsSync(fromBf16(h), fromBf16(w), targets, options);
      expectClose(bf16.logp, f32.logp, { atol: 2e-5, rtol: 2e-5 });
      expectClose(bf16.entropy!, f32.entropy!, { atol: 2e-5, rtol: 2e-5 });
      expect(bf16.logp[1]).toBe(0);
    });

    it(`backward is the float32 gradient up to the bf16 rounding of the gradient tile, T=${rows} V=${vocab}`, () => {
      const { h, w, bias, targets } = problem(rows, hidden, vocab, 2, rows * vocab);
      const gradLogp = randomNormal(rows, 1, 7), gradEntropy = randomNormal(rows, 0.5, 8);
      const options = { bias, chunkSize, chunkVocab, gradEntropy };
      const bf16 = linearLogprobsBackwardSync(h, w, targets, gradLogp, { ...options, dtype: 'bf16' });
      const f32 = linearLogprobsBackwardSync(fromBf16(h), fromBf16(w), targets, gradLogp, options);
      expectClose(bf16.gradHidden, f32.gradHidden, { atol: 1e-2 * maxAbs(f32.gradHidden), rtol: 0 });
      expectClose(bf16.gradWeight, f32.gradWeight, { atol: 1e-2 * maxAbs(f32.gradWeight), rtol: 0 });
      expectClose(bf16.gradBias!, f32.gradBias!, { atol: 1e-5, rtol: 1e-4 });
      expect(bf16.gradHidden.subarray(hidden, 2 * hidden).every((v) => v === 0)).toBe(true); // the ignored row
    });
  }

  it('stays finite and matches the float32 path on huge logits (|z| ~ 1e4)', () => {
    const { h, w, targets } = problem(6, 64, 300, 400, 5);
    const bf16 = linearLogprobsSync(h, w, targets, { dtype: 'bf16', entropy: true });
    const f32 = linearLogprobsSync(fromBf16(h), fromBf16(w), targets, { entropy: true });
    expect(bf16.logp.every(Number.isFinite)).toBe(true);
    expect(maxAbs(bf16.logp)).toBeGreaterThan(100);
    expectClose(bf16.logp, f32.logp, { atol: 1e-2, rtol: 1e-4 });
  });

  it('gradHidden agrees with central differences of Σ g·logp', () => {
    const rows = 3, hidden = 8, vocab = 20;
    const { h, w, targets } = problem(rows, hidden, vocab, 1, 11);
    const gradLogp = randomNormal(rows, 1, 12);
    const { gradHidden } = linearLogprobsBackwardSync(h, w, targets, gradLogp, { dtype: 'bf16' });
    const wide = fromBf16(h), weight = fromBf16(w);
    const loss = (x: Float32Array) => linearLogprobsSync(x, weight, targets).logp.reduce((s, v, t) => s + v * gradLogp[t], 0);
    const eps = 1e-2;
    for (const i of [0, 5, 2 * hidden + 3, 2 * hidden + 7]) {
      const plus = Float32Array.from(wide), minus = Float32Array.from(wide);
      plus[i] += eps, minus[i] -= eps;
      expect(gradHidden[i]).toBeCloseTo((loss(plus) - loss(minus)) / (2 * eps), 2);
    }
  });

  it('gives the same bits for 1 and 2 threads, sync and async', async () => {
    const { h, w, targets } = problem(40, 96, 1300, 2, 13);
    const gradLogp = randomNormal(40, 1, 14);
    const before = getThreads();
    try {
      setThreads(1);
      const one = linearLogprobsBackwardSync(h, w, targets, gradLogp, { dtype: 'bf16', chunkSize: 16 });
      setThreads(2);
      const two = await linearLogprobsBackward(h, w, targets, gradLogp, { dtype: 'bf16', chunkSize: 16 });
      expect(two.gradHidden).toEqual(one.gradHidden);
      expect(two.gradWeight).toEqual(one.gradWeight);
      expect((await linearLogprobs(h, w, targets, { dtype: 'bf16' })).logp).toEqual(linearLogprobsSync(h, w, targets, { dtype: 'bf16' }).logp);
    } finally {
      setThreads(before);
    }
  });

  it('accumulates into caller-provided gradients', () => {
    const { h, w, targets } = problem(5, 16, 70, 1, 15);
    const gradLogp = randomNormal(5, 1, 16);
    const once = linearLogprobsBackwardSync(h, w, targets, gradLogp, { dtype: 'bf16' });
    const twice = linearLogprobsBackwardSync(h, w, targets, gradLogp, {
      dtype: 'bf16', accumulate: true, gradHidden: Float32Array.from(once.gradHidden), gradWeight: Float32Array.from(once.gradWeight),
    });
    expectClose(twice.gradHidden, once.gradHidden.map((v) => 2 * v), { atol: 1e-6, rtol: 1e-6 });
  });
});

describe("linearLogprobs dtype errors", () => {
  const { h, w, targets } = problem(3, 4, 5, 1, 17);
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(GrpoError);
      return [(error as GrpoError).code, (error as GrpoError).message];
    }
    return undefined;
  };

  it('rejects a dtype that does not match the arrays, or an unknown dtype', () => {
    expect(code(() => linearLogprobsSync(fromBf16(h), fromBf16(w), targets, { dtype: 'bf16' }))).toEqual([
      'GRPO_INVALID_ARGUMENT', 'Expected Uint16Array for linearLogprobs hidden but received Float32Array(12)',
    ]);
    expect(code(() => linearLogprobsSync(h, w, targets))?.[1]).toContain("pass dtype: 'bf16'");
    expect(code(() => linearLogprobsSync(h, w, targets, { dtype: 'fp16' as 'bf16' }))?.[0]).toBe('GRPO_VALUE_RANGE');
  });

  it('rejects shapes, NaN bits and bad targets with the float32 path\'s codes', () => {
    expect(code(() => linearLogprobsSync(h.subarray(1), w, targets, { dtype: 'bf16' }))?.[0]).toBe('GRPO_SHAPE_MISMATCH');
    expect(code(() => linearLogprobsSync(h, w.subarray(1), targets, { dtype: 'bf16' }))?.[0]).toBe('GRPO_SHAPE_MISMATCH');
    const nan = Uint16Array.from(w);
    nan[7] = 0x7fc0;
    expect(code(() => linearLogprobsSync(h, nan, targets, { dtype: 'bf16' }))).toEqual(['GRPO_NON_FINITE', expect.stringContaining('weight[7]')]);
    expect(code(() => linearLogprobsSync(h, w, Int32Array.of(0, 5, 1), { dtype: 'bf16' }))?.[0]).toBe('GRPO_INDEX_RANGE');
    expect(code(() => linearLogprobsBackwardSync(h, w, targets, new Float32Array(2), { dtype: 'bf16' }))?.[0]).toBe('GRPO_SHAPE_MISMATCH');
  });

  it('rejects non-arrays in the helpers', () => {
    expect(code(() => toBf16([1, 2] as unknown as Float32Array))?.[0]).toBe('GRPO_INVALID_ARGUMENT');
    expect(code(() => fromBf16(new Int16Array(2) as unknown as Uint16Array))?.[0]).toBe('GRPO_INVALID_ARGUMENT');
  });
});
