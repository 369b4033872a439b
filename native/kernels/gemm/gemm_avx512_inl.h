// Shared by the AVX-512 micro-kernels (fp32, bf16 and AMX): tile shape, column masks, the 16 × 16
// transpose, the bf16 k-pair words and the alpha/beta epilogue. Everything here has internal linkage, so each including translation
// unit keeps its own copy compiled for its own target (no ODR sharing across targets).
#pragma once

#include <immintrin.h>

#define GRPO_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))
#define GRPO_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,avx512bf16")))

// GCC 12 reports the _mm512_undefined_ps() pass-through inside unpack/shuffle intrinsics (transpose16).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

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

// r[i][j] becomes r[j][i] (16 × 16): pairs, quads, then 128-bit lanes.
GRPO_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16], v[16];
  for (int i = 0; i < 16; i += 2) t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  for (int i = 0; i < 16; i += 4) {  // u[i + j] = column 4L + j of rows i .. i+3, in lane L
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44), u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44), u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    v[j] = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88), v[4 + j] = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    v[8 + j] = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88), v[12 + j] = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm512_shuffle_f32x4(v[j], v[8 + j], 0x88), r[8 + j] = _mm512_shuffle_f32x4(v[j], v[8 + j], 0xDD);
    r[4 + j] = _mm512_shuffle_f32x4(v[4 + j], v[12 + j], 0x88), r[12 + j] = _mm512_shuffle_f32x4(v[4 + j], v[12 + j], 0xDD);
  }
}

// 16 words (bf16(x[i]), bf16(y[i])), x in the low half: the k-pairs of two panel rows, rounded to nearest even.
GRPO_AVX512_BF16 inline __m512 pair_words(__m512 x, __m512 y) {
  const __m512i low_half = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i high_half = _mm512_add_epi32(low_half, _mm512_set1_epi32(8));
  const __m512 lo = _mm512_permutex2var_ps(x, low_half, y), hi = _mm512_permutex2var_ps(x, high_half, y);
  return (__m512)_mm512_cvtne2ps_pbh(hi, lo);
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
