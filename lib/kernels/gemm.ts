// Single-precision matrix multiply C = alpha · op(A) · op(B) + beta · C on the native core.
import { native } from '../binding/index.js';
import type { MatmulBf16Kernel } from '../binding/types.js';
import { GrpoError } from '../errors.js';
import type { GemmLayout } from '../reference/gemm.js';
import { MATMUL_DEFAULTS, MATMUL_OPTIONS, type MatmulOptions } from '../options/gemm.js';
import { kernelNaming, type ValuesOf, checkOptions } from '../options/schema.js';
import * as check from '../validate.js';
import { rejectOnThrow, runNative } from './native-call.js';

export { MATMUL_DEFAULTS, MATMUL_OPTIONS, type MatmulOptions } from '../options/gemm.js';
export type { MatmulBf16Kernel } from '../binding/types.js';

/** Shape of one product: op(A) is [m, k], op(B) is [k, n], C is [m, n]. */
export interface MatmulShape {
  m: number;
  n: number;
  k: number;
}

type Resolved = ValuesOf<typeof MATMUL_OPTIONS>;
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

function layoutOf(shape: unknown, options: Resolved): GemmLayout {
  if (shape === null || typeof shape !== 'object') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected matmul shape { m, n, k } but received ${shape === null ? 'null' : typeof shape}`);
  }
  const s = shape as Partial<MatmulShape>;
  const m = check.integer('matmul shape.m', s.m, 0, MAX_DIM), n = check.integer('matmul shape.n', s.n, 0, MAX_DIM);
  const k = check.integer('matmul shape.k', s.k, 0, MAX_DIM);
  const { transA, transB, alpha, beta } = options;
  const lda = leading('matmul lda', options.lda, transA ? m : k), ldb = leading('matmul ldb', options.ldb, transB ? k : n);
  const ldc = leading('matmul ldc', options.ldc, n);
  return { transA, transB, m, n, k, alpha, beta, lda, ldb, ldc };
}

function prepare(a: unknown, b: unknown, shape: unknown, options: MatmulOptions | undefined) {
  const o = checkOptions(MATMUL_OPTIONS, kernelNaming('matmul'), options, MATMUL_DEFAULTS);
  const l = layoutOf(shape, o);
  const av = check.float32Array('matmul a', a), bv = check.float32Array('matmul b', b);
  checkHolds('matmul a', av, l.transA ? l.k : l.m, l.transA ? l.m : l.k, l.lda);
  checkHolds('matmul b', bv, l.transB ? l.n : l.k, l.transB ? l.k : l.n, l.ldb);
  if (l.beta !== 0 && o.out === undefined) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected matmul out (the C that beta = ${l.beta} scales) but received undefined`);
  }
  const c = o.out === undefined ? new Float32Array(l.m * l.ldc) : check.float32Array('matmul out', o.out); // [m, ldc]
  checkHolds('matmul out', c, l.m, l.n, l.ldc);
  return { a: av, b: bv, c, l, bf16: o.bf16 };
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

/**
 * The kernel `matmul(..., { bf16: true })` runs on this CPU: 'amx_bf16' (AMX tiles, where the CPU has AMX-BF16 and
 * Linux grants the tile state), 'avx512_bf16' (vdpbf16ps), or where bf16 is not native the float32 path's name.
 * The two bf16 kernels sum in different orders, so they may differ in the last bits.
 */
export function matmulBf16Kernel(): MatmulBf16Kernel {
  return native().gemmBf16Kernel();
}

/** Synchronous {@link matmul}: blocks the calling thread; for small products. */
export function matmulSync(a: Float32Array, b: Float32Array, shape: MatmulShape, options?: MatmulOptions): Float32Array {
  return run(false, a, b, shape, options) as Float32Array;
}
