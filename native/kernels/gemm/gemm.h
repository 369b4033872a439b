// Single-precision matrix multiply used by the fused LM-head log-prob kernel and the built-in model.
//   C[M,N] = alpha · op(A) · op(B) + beta · C     (row-major; op(X) = Xᵀ when trans_x)
//   op(A) is [M, K] and op(B) is [K, N]; lda/ldb/ldc are row strides of the stored matrices.
// Threaded over blocks of C only: the K reduction order never depends on the thread count,
// so results are bitwise identical for any number of threads. beta = 0 ignores C's contents.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace grpo {

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// op(B) [K, N] packed once into the panels gemm would build on every call, for repeated products with the
// same B (a weight matrix across decoding steps). About N·K floats.
struct PackedB {
  int64_t N = 0, K = 0, k_step = 0;
  std::vector<int64_t> offsets;  // [k-chunk][n-chunk] first float of that chunk's panels
  std::unique_ptr<float, void (*)(void*)> panels{nullptr, nullptr};
  size_t capacity = 0;  // bytes held by panels
};
PackedB pack_b(bool trans_b, int64_t N, int64_t K, const float* B, int64_t ldb);

// The same into `p`, reusing its memory when it holds enough (one buffer re-packed per slice of a weight).
void repack_b(bool trans_b, int64_t N, int64_t K, const float* B, int64_t ldb, PackedB& p);

// C [M, N] = A [M, K] · op(B): the same bits as gemm(false, trans_b, M, N, K, 1, A, lda, B, ldb, 0, C, ldc).
void gemm_packed(int64_t M, const float* A, int64_t lda, const PackedB& b, float* C, int64_t ldc);

// C [M, N] = op(A) · op(B) + beta · C: the same bits as gemm(trans_a, trans_b, M, N, K, 1, A, lda, B, ldb, beta, C, ldc).
void gemm_packed(bool trans_a, int64_t M, const float* A, int64_t lda, const PackedB& b, float beta, float* C, int64_t ldc);

}  // namespace grpo
