// Shared by the AVX-512 micro-kernels (fp32 and bf16): tile shape, column masks and the
// alpha/beta epilogue. Everything here has internal linkage, so each including translation
// unit keeps its own copy compiled for its own target (no ODR sharing across targets).
#pragma once

#include <immintrin.h>

#define GRPO_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))

namespace grpo::gemm_detail {
namespace {

constexpr int kMR = 14, kNR = 32;  // C tile: 14 rows × 2 zmm = 28 accumulators

GRPO_AVX512 inline __mmask16 column_mask(int cols) {
  return cols >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (cols > 0 ? cols : 0)) - 1u);
}

GRPO_AVX512 inline void store(float* c, __mmask16 mask, __m512 acc, __m512 alpha, __m512 beta, bool read_c) {
  __m512 out = _mm512_mul_ps(alpha, acc);
  if (read_c) out = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(mask, c), out);
  _mm512_mask_storeu_ps(c, mask, out);
}

GRPO_AVX512 inline void prefetch_tile(const float* c, int64_t ldc, int rows) {
  for (int r = 0; r < rows; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16), _MM_HINT_T0);
  }
}

// C[r, 0:cols] = alpha · [lo[r] hi[r]] + beta · C[r, 0:cols] for the R rows.
template <int R>
GRPO_AVX512 inline __attribute__((always_inline)) void write_tile(float* c, int64_t ldc, const __m512* lo,
                                                                  const __m512* hi, float alpha, float beta, int cols) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  const __mmask16 m0 = column_mask(cols), m1 = column_mask(cols - 16);
  const bool read_c = beta != 0.0f;
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) {
    store(c + r * ldc, m0, lo[r], va, vb, read_c);
    if (m1) store(c + r * ldc + 16, m1, hi[r], va, vb, read_c);
  }
}

}  // namespace
}  // namespace grpo::gemm_detail
