// AVX-512 micro-kernel: a 14 × 32 tile of C in 28 zmm accumulators. Each k step loads two
// vectors of the packed B row and broadcasts 14 packed A values (broadcast-FMA).
// Only this file's functions carry the AVX-512 target; nothing here comes from the std library.
#include <immintrin.h>

#include "gemm_kernels.h"

#define GRPO_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))

namespace grpo::gemm_detail {

namespace {

constexpr int kMR = 14, kNR = 32;

GRPO_AVX512 inline __mmask16 column_mask(int cols) {
  return cols >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (cols > 0 ? cols : 0)) - 1u);
}

GRPO_AVX512 inline void store(float* c, __mmask16 mask, __m512 acc, __m512 alpha, __m512 beta, bool read_c) {
  __m512 out = _mm512_mul_ps(alpha, acc);
  if (read_c) out = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(mask, c), out);
  _mm512_mask_storeu_ps(c, mask, out);
}

// R rows of the tile (R < 14 only for the last rows of C); columns beyond `cols` are masked.
template <int R>
GRPO_AVX512 void tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta,
                      int /*rows*/, int cols) {
  __m512 lo[R], hi[R];
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) {
    lo[r] = _mm512_setzero_ps(), hi[r] = _mm512_setzero_ps();
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16), _MM_HINT_T0);
  }
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += kNR) {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 14
    for (int r = 0; r < R; ++r) {
      const __m512 ar = _mm512_set1_ps(a[r]);
      lo[r] = _mm512_fmadd_ps(ar, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(ar, b1, hi[r]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  const __mmask16 m0 = column_mask(cols), m1 = column_mask(cols - 16);
  const bool read_c = beta != 0.0f;
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) {
    store(c + r * ldc, m0, lo[r], va, vb, read_c);
    if (m1) store(c + r * ldc + 16, m1, hi[r], va, vb, read_c);
  }
}

template <int... R>
struct Rows {
  static constexpr TileFn table[sizeof...(R)] = {&tile<R>...};
};

void run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int rows,
         int cols) {
  Rows<1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14>::table[rows - 1](kc, a, b, c, ldc, alpha, beta, rows, cols);
}

}  // namespace

TileKernel avx512_kernel() { return {"avx512", kMR, kNR, true, &run}; }

}  // namespace grpo::gemm_detail
