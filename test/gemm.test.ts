// matmul against the float64 triple loop: transposes, odd shapes, strides, alpha/beta,
// the async form, bitwise reproducibility across thread counts, and typed errors.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { cpuPath, getThreads, matmul, matmulBf16Kernel, matmulBf16Native, matmulSync, setThreads, type MatmulOptions } from '../lib/index.js';
import { gemmReference, type GemmLayout } from '../lib/reference/gemm.js';
import { expectClose } from './helpers/close.js';
import { codeOf } from './helpers/errors.js';
import { randomNormal } from './helpers/random.js';

const defaultThreads = getThreads();
afterEach(() => setThreads(defaultThreads));

/** A layout whose leading dimensions are the row widths plus `pad` extra columns. */
type Case = Omit<GemmLayout, 'lda' | 'ldb' | 'ldc'> & { pad: number };

function inputs(c: Case, seed: number) {
  const lda = (c.transA ? c.m : c.k) + c.pad, ldb = (c.transB ? c.k : c.n) + c.pad, ldc = c.n + c.pad;
  const a = randomNormal((c.transA ? c.k : c.m) * lda, 1, seed); // [rows of stored A, lda]
  const b = randomNormal((c.transB ? c.n : c.k) * ldb, 1, seed + 1); // [rows of stored B, ldb]
  const out = randomNormal(c.m * ldc, 1, seed + 2); // [m, ldc]
  return { a, b, out, lda, ldb, ldc };
}

function checkCase(c: Case, seed: number): void {
  const x = inputs(c, seed);
  const expected = gemmReference(x.a, x.b, Float32Array.from(x.out), { ...c, lda: x.lda, ldb: x.ldb, ldc: x.ldc });
  const options: MatmulOptions = { transA: c.transA, transB: c.transB, alpha: c.alpha, beta: c.beta, lda: x.lda, ldb: x.ldb, ldc: x.ldc, out: x.out };
  const got = matmulSync(x.a, x.b, { m: c.m, n: c.n, k: c.k }, options);
  expect(got).toBe(x.out);
  expectClose(got, expected, { atol: 1e-5 * Math.sqrt(c.k + 1), rtol: 1e-5 });
}

describe('matmul matches the float64 reference', () => {
  for (const transA of [false, true])
    for (const transB of [false, true])
      it(`transA=${transA} transB=${transB}: odd shapes, several k-chunks, padded strides, alpha/beta`, () => {
        checkCase({ transA, transB, m: 1, n: 1, k: 1, alpha: 1, beta: 0, pad: 0 }, 1);
        checkCase({ transA, transB, m: 29, n: 47, k: 600, alpha: 0.5, beta: -2, pad: 3 }, 2);
        checkCase({ transA, transB, m: 15, n: 70, k: 0, alpha: 1, beta: 0.5, pad: 1 }, 3);
      });

  it('agrees on random shapes (property, fixed seed)', () => {
    const shape = fc.record({
      transA: fc.boolean(), transB: fc.boolean(), m: fc.integer({ min: 1, max: 40 }), n: fc.integer({ min: 1, max: 80 }),
      k: fc.integer({ min: 0, max: 70 }), alpha: fc.constantFrom(1, -0.5, 3), beta: fc.constantFrom(0, 1, 0.25), pad: fc.integer({ min: 0, max: 4 }),
    });
    fc.assert(fc.property(shape, fc.integer({ min: 1, max: 1000 }), (c, seed) => checkCase(c, seed)), { seed: 20261130, numRuns: 60 });
  });

  it('allocates C when no out is given, and the Promise form gives the same bits', async () => {
    const a = randomNormal(33 * 70, 1, 9), b = randomNormal(70 * 45, 1, 10); // [33, 70], [70, 45]
    const sync = matmulSync(a, b, { m: 33, n: 45, k: 70 });
    expect(sync.length).toBe(33 * 45);
    expect(await matmul(a, b, { m: 33, n: 45, k: 70 })).toEqual(sync);
  });

  it('beta = 0 ignores NaN in C', () => {
    const out = new Float32Array(6).fill(NaN); // [2, 3]
    matmulSync(new Float32Array([1, 2]), new Float32Array([1, 2, 3, 4, 5, 6]), { m: 2, n: 3, k: 1 }, { out });
    expect(Array.from(out)).toEqual([1, 2, 3, 2, 4, 6]);
  });

  it('gives identical bits on 1 and 2 threads', () => {
    const a = randomNormal(70 * 1300, 1, 11), b = randomNormal(600 * 1300, 1, 12); // [70, 1300], [600, 1300]
    setThreads(1);
    const one = matmulSync(a, b, { m: 70, n: 600, k: 1300 }, { transB: true });
    setThreads(2);
    const two = matmulSync(a, b, { m: 70, n: 600, k: 1300 }, { transB: true });
    expect(Buffer.from(two.buffer).equals(Buffer.from(one.buffer))).toBe(true);
  });
});

/** Nearest-even bfloat16 value of each float (finite inputs and ±Infinity; NaN stays NaN), as the BF16 kernels pack them. */
function roundToBf16(x: Float32Array): Float32Array {
  const bits = new Uint32Array(Float32Array.from(x).buffer);
  for (let i = 0; i < bits.length; i++) {
    if (!Number.isNaN(x[i])) bits[i] = ((bits[i] + 0x7fff + ((bits[i] >>> 16) & 1)) & 0xffff0000) >>> 0;
  }
  return new Float32Array(bits.buffer);
}

/** The bf16 product of a case and the reference on bf16-rounded inputs (where native; else the float32 product). */
function bf16Case(c: Case, seed: number, poison?: (a: Float32Array, b: Float32Array) => void) {
  const x = inputs(c, seed);
  poison?.(x.a, x.b);
  const native = matmulBf16Native();
  const [ra, rb] = native ? [roundToBf16(x.a), roundToBf16(x.b)] : [x.a, x.b];
  const expected = gemmReference(ra, rb, Float32Array.from(x.out), { ...c, lda: x.lda, ldb: x.ldb, ldc: x.ldc });
  const options: MatmulOptions = { transA: c.transA, transB: c.transB, alpha: c.alpha, beta: c.beta, lda: x.lda, ldb: x.ldb, ldc: x.ldc, out: x.out, bf16: true };
  return { got: matmulSync(x.a, x.b, { m: c.m, n: c.n, k: c.k }, options), expected };
}

describe('matmul with bf16', () => {
  it('names the kernel it runs: AMX or AVX512_BF16 where native, the float32 path elsewhere', () => {
    const kernel = matmulBf16Kernel();
    expect(matmulBf16Native() ? ['amx_bf16', 'avx512_bf16'] : [cpuPath()]).toContain(kernel);
  });

  it('equals the reference on bf16-rounded inputs where native, and the float32 product elsewhere', () => {
    const a = randomNormal(37 * 301, 1, 13), b = randomNormal(301 * 70, 1, 14); // [37, 301], [301, 70]
    const native = matmulBf16Native();
    const [ra, rb] = native ? [roundToBf16(a), roundToBf16(b)] : [a, b];
    const layout = { transA: false, transB: false, m: 37, n: 70, k: 301, alpha: 1, beta: 0, lda: 301, ldb: 70, ldc: 70 };
    const expected = gemmReference(ra, rb, new Float32Array(37 * 70), layout);
    expectClose(matmulSync(a, b, { m: 37, n: 70, k: 301 }, { bf16: true }), expected, { atol: 2e-4, rtol: 1e-5 });
  });

  // Edges of the AMX tiles (16 rows and columns, 32 k per step) and of the vdpbf16ps k-pairs (odd k).
  for (const transA of [false, true])
    for (const transB of [false, true])
      it(`transA=${transA} transB=${transB}: 1×1×1, k = 1, odd k, 15/17/33, a 1000+ dimension, alpha/beta, padded strides`, () => {
        const shapes: [number, number, number, number, number][] = [
          [1, 1, 1, 1, 0], [17, 15, 1, 1, 0], [15, 33, 17, 0.5, 1], [33, 17, 15, -1, 0.25], [16, 32, 33, 1, 0], [1030, 17, 65, 2, -0.5], [5, 40, 1031, 1, 1],
        ];
        shapes.forEach(([m, n, k, alpha, beta], i) => {
          const { got, expected } = bf16Case({ transA, transB, m, n, k, alpha, beta, pad: i % 3 }, 40 + i);
          expectClose(got, expected, { atol: 1e-5 * Math.sqrt(k + 1) * 4, rtol: 1e-5 });
        });
      });

  it('NaN and ±Infinity in A and B reach the same elements of C as in the reference', () => {
    const c: Case = { transA: false, transB: true, m: 35, n: 37, k: 41, alpha: 1, beta: 0, pad: 0 };
    const { got, expected } = bf16Case(c, 60, (a, b) => {
      a[2 * 41 + 5] = Infinity; a[33 * 41 + 40] = -Infinity; a[20 * 41] = NaN; // A [35, 41]
      b[3 * 41 + 7] = NaN; b[36 * 41 + 40] = Infinity; b[16 * 41 + 5] = -Infinity; // B [37, 41]
    });
    expect(got.some((v) => Number.isNaN(v)) && got.some((v) => v === Infinity || v === -Infinity)).toBe(true);
    got.forEach((v, i) => {
      const e = expected[i];
      if (Number.isNaN(e)) expect(v).toBeNaN();
      else if (!Number.isFinite(e)) expect(v).toBe(e);
      else expect(Math.abs(v - e)).toBeLessThanOrEqual(1e-4 + 1e-5 * Math.abs(e));
    });
  });

  it('beta = 0 ignores NaN in C', () => {
    const a = randomNormal(17 * 40, 1, 61), b = randomNormal(40 * 33, 1, 62); // [17, 40], [40, 33]
    const out = matmulSync(a, b, { m: 17, n: 33, k: 40 }, { bf16: true, out: new Float32Array(17 * 33).fill(NaN) });
    expect(out.every((v) => Number.isFinite(v))).toBe(true);
  });

  it('gives identical bits on 1 and 2 threads and on every call', () => {
    const a = randomNormal(70 * 1031, 1, 63), b = randomNormal(600 * 1031, 1, 64); // [70, 1031], [600, 1031]
    const product = () => matmulSync(a, b, { m: 70, n: 600, k: 1031 }, { transB: true, bf16: true });
    setThreads(1);
    const one = product();
    setThreads(2);
    const two = product(), again = product();
    expect(Buffer.from(two.buffer).equals(Buffer.from(one.buffer))).toBe(true);
    expect(Buffer.from(again.buffer).equals(Buffer.from(two.buffer))).toBe(true);
  });
});

describe('matmul rejects bad input with typed errors', () => {
  const a = new Float32Array(6), b = new Float32Array(12); // [2, 3], [3, 4]
  const shape = { m: 2, n: 4, k: 3 };
  it.each([
    ['a of the wrong type', () => matmulSync(new Float64Array(6) as unknown as Float32Array, b, shape), 'GRPO_INVALID_ARGUMENT'],
    ['a too short', () => matmulSync(new Float32Array(5), b, shape), 'GRPO_SHAPE_MISMATCH'],
    ['b too short for transB', () => matmulSync(a, new Float32Array(11), shape, { transB: true }), 'GRPO_SHAPE_MISMATCH'],
    ['out too short', () => matmulSync(a, b, shape, { out: new Float32Array(7) }), 'GRPO_SHAPE_MISMATCH'],
    ['lda below the row width', () => matmulSync(a, b, shape, { lda: 2 }), 'GRPO_VALUE_RANGE'],
    ['negative m', () => matmulSync(a, b, { m: -1, n: 4, k: 3 }), 'GRPO_VALUE_RANGE'],
    ['fractional k', () => matmulSync(a, b, { m: 2, n: 4, k: 1.5 }), 'GRPO_INVALID_ARGUMENT'],
    ['missing shape', () => matmulSync(a, b, null as never), 'GRPO_INVALID_ARGUMENT'],
    ['beta without out', () => matmulSync(a, b, shape, { beta: 1 }), 'GRPO_INVALID_ARGUMENT'],
    ['infinite alpha', () => matmulSync(a, b, shape, { alpha: Infinity }), 'GRPO_VALUE_RANGE'],
    ['unknown option', () => matmulSync(a, b, shape, { transa: true } as never), 'GRPO_UNKNOWN_OPTION'],
    ['non-boolean bf16', () => matmulSync(a, b, shape, { bf16: 1 } as never), 'GRPO_INVALID_ARGUMENT'],
  ])('%s', (_name, call, code) => {
    expect(codeOf(call)).toBe(code);
  });

  it('rejects in the Promise form instead of throwing', async () => {
    await expect(matmul(new Float32Array(1), b, shape)).rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH' });
  });
});
