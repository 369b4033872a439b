// AVX2 + FMA micro-kernel: a 6 × 16 tile of C in 12 ymm accumulators (full tiles only;
// the driver runs edge tiles through a scratch tile). Nothing here comes from the std library.
#include "gemm_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace grpo::gemm_detail {

namespace {

constexpr int kMR = 6, kNR = 16;

__attribute__((target("avx2,fma"))) void tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                              float alpha, float beta, int /*rows*/, int /*cols*/) {
  __m256 lo[kMR], hi[kMR];
#pragma GCC unroll 6
  for (int r = 0; r < kMR; ++r) lo[r] = _mm256_setzero_ps(), hi[r] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += kNR) {
    const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int r = 0; r < kMR; ++r) {
      const __m256 ar = _mm256_broadcast_ss(a + r);
      lo[r] = _mm256_fmadd_ps(ar, b0, lo[r]);
      hi[r] = _mm256_fmadd_ps(ar, b1, hi[r]);
    }
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 6
  for (int r = 0; r < kMR; ++r) {
    float* row = c + r * ldc;
    __m256 out0 = _mm256_mul_ps(va, lo[r]), out1 = _mm256_mul_ps(va, hi[r]);
    if (beta != 0.0f) {
      out0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row), out0);
      out1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(row + 8), out1);
    }
    _mm256_storeu_ps(row, out0);
    _mm256_storeu_ps(row + 8, out1);
  }
}

}  // namespace

TileKernel avx2_kernel() { return {"avx2", kMR, kNR, false, &tile, &pack_transposed_generic, nullptr}; }

}  // namespace grpo::gemm_detail

#endif  // x86-64 (elsewhere gemm.cc defines this path as the plain kernel)
