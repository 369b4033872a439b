// Blocked GEMM: pack panels of A and B, then a register-tiled micro-kernel written so that
// the compiler vectorises it for each GRPO_CLONES target.
#include "gemm.h"

#include <algorithm>
#include <vector>

#include "simd.h"
#include "thread_pool.h"

namespace grpo {

namespace {

constexpr int64_t kMR = 6, kNR = 32;  // micro-tile of C: 6 rows × 2 AVX-512 vectors
constexpr int64_t kKC = 256;          // depth of one packed panel (fits L1 with the tile)
constexpr int64_t kNC = 512;          // columns of C per parallel task

// panel [kc, kMR] from op(A) rows i0.. (zero-padded past M)
void pack_a(bool trans, const float* A, int64_t lda, int64_t i0, int64_t rows, int64_t k0, int64_t kc, float* panel) {
  for (int64_t k = 0; k < kc; ++k)
    for (int64_t r = 0; r < kMR; ++r)
      panel[k * kMR + r] = r < rows ? (trans ? A[(k0 + k) * lda + i0 + r] : A[(i0 + r) * lda + k0 + k]) : 0.0f;
}

// panel [kc, kNR] from op(B) columns j0.. (zero-padded past N)
void pack_b(bool trans, const float* B, int64_t ldb, int64_t j0, int64_t cols, int64_t k0, int64_t kc, float* panel) {
  for (int64_t k = 0; k < kc; ++k)
    for (int64_t c = 0; c < kNR; ++c)
      panel[k * kNR + c] = c < cols ? (trans ? B[(j0 + c) * ldb + k0 + k] : B[(k0 + k) * ldb + j0 + c]) : 0.0f;
}

GRPO_CLONES void micro_kernel(int64_t kc, const float* a_panel, const float* b_panel, float acc[kMR][kNR]) {
  for (int64_t k = 0; k < kc; ++k) {
    const float* b = b_panel + k * kNR;
    for (int64_t r = 0; r < kMR; ++r) {
      const float a = a_panel[k * kMR + r];
      for (int64_t c = 0; c < kNR; ++c) acc[r][c] += a * b[c];
    }
  }
}

// C[:, j0 : j0+nc] for all rows, accumulating K in kKC steps (fixed order).
void gemm_columns(bool trans_a, bool trans_b, int64_t M, int64_t j0, int64_t nc, int64_t K, float alpha, const float* A,
                  int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  const int64_t col_panels = (nc + kNR - 1) / kNR;
  std::vector<float> b_pack(static_cast<size_t>(col_panels * kKC * kNR));
  std::vector<float> a_pack(static_cast<size_t>(kKC * kMR));
  for (int64_t k0 = 0; k0 < K || k0 == 0; k0 += kKC) {
    const int64_t kc = std::min(kKC, K - k0);
    for (int64_t p = 0; p < col_panels; ++p)
      pack_b(trans_b, B, ldb, j0 + p * kNR, std::min(kNR, nc - p * kNR), k0, kc, b_pack.data() + p * kKC * kNR);
    const float scale_c = k0 == 0 ? beta : 1.0f;
    for (int64_t i0 = 0; i0 < M; i0 += kMR) {
      const int64_t rows = std::min(kMR, M - i0);
      pack_a(trans_a, A, lda, i0, rows, k0, kc, a_pack.data());
      for (int64_t p = 0; p < col_panels; ++p) {
        float acc[kMR][kNR] = {};
        micro_kernel(kc, a_pack.data(), b_pack.data() + p * kKC * kNR, acc);
        const int64_t cols = std::min(kNR, nc - p * kNR);
        for (int64_t r = 0; r < rows; ++r) {
          float* c = C + (i0 + r) * ldc + j0 + p * kNR;
          for (int64_t j = 0; j < cols; ++j) c[j] = alpha * acc[r][j] + (scale_c == 0.0f ? 0.0f : scale_c * c[j]);
        }
      }
    }
    if (K == 0) break;
  }
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  parallel_for(N, kNC, [&](int64_t begin, int64_t end) {
    gemm_columns(trans_a, trans_b, M, begin, end - begin, K, alpha, A, lda, B, ldb, beta, C, ldc);
  });
}

}  // namespace grpo
