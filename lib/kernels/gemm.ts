// Single-precision matrix multiply C = alpha · op(A) · op(B) + beta · C on the native core.
import { native } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import type { GemmLayout } from '../reference/gemm.js';
import * as check from '../validate.js';
import { rejectOnThrow, runNative } from './native-call.js';

/** Shape of one product: op(A) is [m, k], op(B) is [k, n], C is [m, n]. */
export interface MatmulShape {
  m: number;
  n: number;
  k: number;
}

/** Options of {@link matmul}. */
export interface MatmulOptions {
  /** Use Aᵀ: `a` is stored [k, lda] instead of [m, lda]. @defaultValue false */
  transA?: boolean;
  /** Use Bᵀ: `b` is stored [n, ldb] instead of [k, ldb]. @defaultValue false */
  transB?: boolean;
  /** Scale of the product. @defaultValue 1 */
  alpha?: number;
  /** Scale of the existing C; needs `out`. 0 ignores C's contents (NaN included). @defaultValue 0 */
  beta?: number;
  /** Row stride of `a`, at least its stored row width. @defaultValue the stored row width (k, or m with transA) */
  lda?: number;
  /** Row stride of `b`, at least its stored row width. @defaultValue the stored row width (n, or k with transB) */
  ldb?: number;
  /** Row stride of C, at least n. @defaultValue n */
  ldc?: number;
  /** C [m, ldc], written in place and returned. @defaultValue a new Float32Array(m · ldc) */
  out?: Float32Array;
  /**
   * Round A and B to bfloat16 and multiply with float32 sums (AVX512_BF16, about twice as fast).
   * Where {@link matmulBf16Native} is false this is the float32 product. @defaultValue false
   */
  bf16?: boolean;
}

const DEFAULTS = Object.freeze({ transA: false, transB: false, alpha: 1, beta: 0, bf16: false });
const KEYS = ['transA', 'transB', 'alpha', 'beta', 'lda', 'ldb', 'ldc', 'out', 'bf16'] as const;
const MAX_DIM = 2 ** 31 - 1;

/** Throws unless `view` holds `rows` rows of `width` floats `ld` apart. */
function checkHolds(name: string, view: Float32Array, rows: number, width: number, ld: number): void {
  const needed = rows > 0 && width > 0 ? (rows - 1) * ld + width : 0;
  if (view.length < needed) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH',
      `Expected ${name} to hold ${rows} rows of ${width} floats with stride ${ld} (${needed} elements) but received ${view.length}`);
  }
}

function leading(name: string, value: number | undefined, width: number): number {
  return check.integer(name, value ?? Math.max(1, width), Math.max(1, width), MAX_DIM);
}

function layoutOf(shape: unknown, options: MatmulOptions): GemmLayout {
  if (shape === null || typeof shape !== 'object') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected matmul shape { m, n, k } but received ${shape === null ? 'null' : typeof shape}`);
  }
  const s = shape as Partial<MatmulShape>;
  const m = check.integer('matmul shape.m', s.m, 0, MAX_DIM), n = check.integer('matmul shape.n', s.n, 0, MAX_DIM);
  const k = check.integer('matmul shape.k', s.k, 0, MAX_DIM);
  const transA = check.boolean('matmul transA', options.transA ?? DEFAULTS.transA);
  const transB = check.boolean('matmul transB', options.transB ?? DEFAULTS.transB);
  const alpha = check.number('matmul alpha', options.alpha ?? DEFAULTS.alpha, Number.isFinite, 'to be finite');
  const beta = check.number('matmul beta', options.beta ?? DEFAULTS.beta, Number.isFinite, 'to be finite');
  const lda = leading('matmul lda', options.lda, transA ? m : k), ldb = leading('matmul ldb', options.ldb, transB ? k : n);
  const ldc = leading('matmul ldc', options.ldc, n);
  return { transA, transB, m, n, k, alpha, beta, lda, ldb, ldc };
}

function prepare(a: unknown, b: unknown, shape: unknown, options: MatmulOptions | undefined) {
  check.knownKeys('matmul', options, KEYS);
  const o = options ?? {};
  const l = layoutOf(shape, o);
  const av = check.float32Array('matmul a', a), bv = check.float32Array('matmul b', b);
  checkHolds('matmul a', av, l.transA ? l.k : l.m, l.transA ? l.m : l.k, l.lda);
  checkHolds('matmul b', bv, l.transB ? l.n : l.k, l.transB ? l.k : l.n, l.ldb);
  if (l.beta !== 0 && o.out === undefined) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected matmul out (the C that beta = ${l.beta} scales) but received undefined`);
  }
  const c = o.out === undefined ? new Float32Array(l.m * l.ldc) : check.float32Array('matmul out', o.out); // [m, ldc]
  checkHolds('matmul out', c, l.m, l.n, l.ldc);
  const bf16 = check.boolean('matmul bf16', o.bf16 ?? DEFAULTS.bf16);
  return { a: av, b: bv, c, l, bf16 };
}

function run(async: boolean, a: unknown, b: unknown, shape: unknown, options?: MatmulOptions) {
  const { a: av, b: bv, c, l, bf16 } = prepare(a, b, shape, options);
  return runNative(async,
    (x) => native()[bf16 ? 'gemmBf16' : 'gemm'](av, bv, c, l, x),
    () => c);
}

/**
 * C = alpha · op(A) · op(B) + beta · C in float32 (row-major), computed off the event loop.
 * The sum over k is grouped the same way for any thread count, so results are bitwise
 * reproducible across `setThreads`. NaN and Infinity in the inputs propagate; they are not rejected.
 * @param a A [m, lda], or [k, lda] with `transA`
 * @param b B [k, ldb], or [n, ldb] with `transB`
 * @returns C [m, ldc]: `options.out` when given, else a new array
 */
export function matmul(a: Float32Array, b: Float32Array, shape: MatmulShape, options?: MatmulOptions): Promise<Float32Array> {
  return rejectOnThrow(() => run(true, a, b, shape, options) as Promise<Float32Array>);
}

/** True when `matmul(..., { bf16: true })` runs bfloat16 products on this CPU (AVX512_BF16). */
export function matmulBf16Native(): boolean {
  return native().gemmBf16Native();
}

/** Synchronous {@link matmul}: blocks the calling thread; for small products. */
export function matmulSync(a: Float32Array, b: Float32Array, shape: MatmulShape, options?: MatmulOptions): Float32Array {
  return run(false, a, b, shape, options) as Float32Array;
}
