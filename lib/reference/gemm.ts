// The plain triple loop behind matmul, in float64: what tests and benches compare against.

/** Shapes and layout of one C = alpha · op(A) · op(B) + beta · C, as in {@link matmul}. */
export interface GemmLayout {
  transA: boolean;
  transB: boolean;
  m: number;
  n: number;
  k: number;
  alpha: number;
  beta: number;
  lda: number;
  ldb: number;
  ldc: number;
}

/** Writes C [m, ldc] in place; beta = 0 ignores C's contents. */
export function gemmReference(a: Float32Array, b: Float32Array, c: Float32Array, l: GemmLayout): Float32Array {
  for (let i = 0; i < l.m; i++) {
    for (let j = 0; j < l.n; j++) {
      let sum = 0;
      for (let p = 0; p < l.k; p++) {
        const x = l.transA ? a[p * l.lda + i] : a[i * l.lda + p];
        const y = l.transB ? b[j * l.ldb + p] : b[p * l.ldb + j];
        sum += x * y;
      }
      const old = l.beta === 0 ? 0 : l.beta * c[i * l.ldc + j];
      c[i * l.ldc + j] = l.alpha * sum + old;
    }
  }
  return c;
}
