// Single-precision matrix multiply used by the fused LM-head log-prob kernel and the built-in model.
//   C[M,N] = alpha · op(A) · op(B) + beta · C     (row-major; op(X) = Xᵀ when trans_x)
//   op(A) is [M, K] and op(B) is [K, N]; lda/ldb/ldc are row strides of the stored matrices.
// Threaded over blocks of C only: the K reduction order never depends on the thread count,
// so results are bitwise identical for any number of threads. beta = 0 ignores C's contents.
#pragma once

#include <cstdint>

namespace grpo {

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace grpo
