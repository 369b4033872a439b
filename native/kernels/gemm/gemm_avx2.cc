// AVX2 + FMA micro-kernel: a 6 × 16 tile of C in 12 ymm accumulators (full tiles only;
// the driver runs edge tiles through a scratch tile), and its operand packer (8 × 8 register
// transposes). Nothing here comes from the std library.
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

// r[i][j] becomes r[j][i] (8 × 8): pairs, quads, then 128-bit lanes.
__attribute__((target("avx2,fma"))) inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  for (int i = 0; i < 8; i += 4) {  // u[i + j] = column 4L + j of rows i .. i+3, in lane L
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44), u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44), u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j)
    r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20), r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
}

// Lanes [0, n) set, n clamped to [0, 8].
__attribute__((target("avx2,fma"))) inline __m256i first_lanes(int64_t n) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n > 8 ? 8 : static_cast<int>(n)), lane);
}

// The TransposeFn, 8 × 8 blocks through registers; masked loads and stores at the edges (width 6 or 16).
__attribute__((target("avx2,fma"))) void pack_transposed(const float* src, int64_t ld, int count, int64_t kc, int width,
                                                         float* panel) {
  for (int g = 0; g < width; g += 8) {
    const int rows = count - g < 0 ? 0 : count - g;
    const __m256i out_mask = first_lanes(width - g);
    for (int64_t k0 = 0; k0 < kc; k0 += 8) {
      const __m256i in_mask = first_lanes(kc - k0);
      __m256 r[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) r[i] = i < rows ? _mm256_maskload_ps(src + (g + i) * ld + k0, in_mask) : _mm256_setzero_ps();
      transpose8(r);
      const int64_t kn = kc - k0 < 8 ? kc - k0 : 8;
      for (int64_t j = 0; j < kn; ++j) _mm256_maskstore_ps(panel + (k0 + j) * width + g, out_mask, r[j]);
    }
  }
}

}  // namespace

TileKernel avx2_kernel() { return {"avx2", kMR, kNR, false, &tile, &pack_transposed, nullptr}; }

}  // namespace grpo::gemm_detail

#endif  // x86-64 (elsewhere gemm.cc defines this path as the plain kernel)
