/* grpo-native C ABI: single-precision matrix multiply.
 *
 *   C[M,N] = alpha · op(A) · op(B) + beta · C      row-major; op(X) = Xᵀ when trans_x != 0
 *
 * op(A) is [M, K] and op(B) is [K, N]. A is stored [M, lda] (or [K, lda] when transposed),
 * B is stored [K, ldb] (or [N, ldb] when transposed), C is stored [M, ldc]; each leading
 * dimension is at least the stored row's width. beta = 0 ignores C's contents (NaN included).
 * Results are bitwise identical for any number of threads.
 */
#ifndef GRPO_GEMM_H
#define GRPO_GEMM_H

#include "grpo.h"

#ifdef __cplusplus
extern "C" {
#endif

grpo_status grpo_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                       int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

/* The same product with A and B rounded to bfloat16 and float32 sums, where the CPU has
 * AVX512_BF16 (about twice as fast); elsewhere exactly grpo_sgemm. */
grpo_status grpo_sgemm_bf16(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                            int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

/* 1 when grpo_sgemm_bf16 runs bfloat16 products on this CPU, 0 when it is grpo_sgemm. */
int grpo_sgemm_bf16_native(void);

#ifdef __cplusplus
}
#endif

#endif /* GRPO_GEMM_H */
