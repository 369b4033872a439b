// The options of matmul (lib/kernels/gemm.ts), declared once.
import { boolean, defaultsOf, FINITE, number, opaque, type OptionsOf } from './schema.js';

/** Strides are checked against the shape by matmul (at least the stored row width). */
const stride = (doc: string, defaultDoc: string) => opaque<number>('integer >= the stored row width', doc, defaultDoc);

export const MATMUL_OPTIONS = {
  transA: boolean(false, 'Use Aᵀ: `a` is stored [k, lda] instead of [m, lda].'),
  transB: boolean(false, 'Use Bᵀ: `b` is stored [n, ldb] instead of [k, ldb].'),
  alpha: number(1, 'Scale of the product.', FINITE),
  beta: number(0, 'Scale of the existing C; needs `out`. 0 ignores C\'s contents (NaN included).', FINITE),
  lda: stride('Row stride of `a`.', 'the stored row width (k, or m with transA)'),
  ldb: stride('Row stride of `b`.', 'the stored row width (n, or k with transB)'),
  ldc: stride('Row stride of C, at least n.', 'n'),
  out: opaque<Float32Array>('Float32Array [m, ldc]', 'C, written in place and returned.', 'a new Float32Array(m · ldc)'),
  bf16: boolean(false, 'Round A and B to bfloat16 and multiply with float32 sums (AMX-BF16 tiles, else AVX512_BF16; '
    + '`matmulBf16Kernel` names which). Where `matmulBf16Native` is false this is the float32 product.'),
};

export type MatmulOptions = OptionsOf<typeof MATMUL_OPTIONS>;
export const MATMUL_DEFAULTS = defaultsOf(MATMUL_OPTIONS);
