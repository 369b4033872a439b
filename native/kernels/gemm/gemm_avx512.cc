// AVX-512 micro-kernel: a 14 × 32 tile of C in 28 zmm accumulators. Each k step loads two
// vectors of the packed B row and broadcasts 14 packed A values (broadcast-FMA).
// Only this file's functions carry the AVX-512 target; nothing here comes from the std library.
#include "gemm_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "gemm_avx512_inl.h"

namespace grpo::gemm_detail {

namespace {

GRPO_AVX512 inline __mmask16 first(int64_t n) { return column_mask(n > 16 ? 16 : static_cast<int>(n)); }

// The TransposeFn, 16 × 16 blocks through registers; masked loads and stores at the edges.
GRPO_AVX512 void pack_transposed(const float* src, int64_t ld, int count, int64_t kc, int width, float* panel) {
  for (int g = 0; g < width; g += 16) {
    const int rows = count - g < 0 ? 0 : count - g;
    const __mmask16 out_mask = first(width - g);
    for (int64_t k0 = 0; k0 < kc; k0 += 16) {
      const __mmask16 in_mask = first(kc - k0);
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) r[i] = i < rows ? _mm512_maskz_loadu_ps(in_mask, src + (g + i) * ld + k0) : _mm512_setzero_ps();
      transpose16(r);
      const int64_t kn = kc - k0 < 16 ? kc - k0 : 16;
      for (int64_t j = 0; j < kn; ++j) _mm512_mask_storeu_ps(panel + (k0 + j) * width + g, out_mask, r[j]);
    }
  }
}

// R rows of the tile (R < 14 only for the last rows of C); columns beyond `cols` are masked.
template <int R>
GRPO_AVX512 void tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta,
                      int /*rows*/, int cols) {
  __m512 lo[R], hi[R];
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) lo[r] = _mm512_setzero_ps(), hi[r] = _mm512_setzero_ps();
  prefetch_tile(c, ldc, R);
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += kNR) {
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 14
    for (int r = 0; r < R; ++r) {
      const __m512 ar = _mm512_set1_ps(a[r]);
      lo[r] = _mm512_fmadd_ps(ar, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(ar, b1, hi[r]);
    }
  }
  write_tile<R>(c, ldc, lo, hi, alpha, beta, cols);
}

constexpr TileFn kTiles[kMR] = {&tile<1>, &tile<2>, &tile<3>,  &tile<4>,  &tile<5>,  &tile<6>,  &tile<7>,
                                 &tile<8>, &tile<9>, &tile<10>, &tile<11>, &tile<12>, &tile<13>, &tile<14>};

void run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int rows, int cols) {
  kTiles[rows - 1](kc, a, b, c, ldc, alpha, beta, rows, cols);
}

}  // namespace

TileKernel avx512_kernel() { return {"avx512", kMR, kNR, true, &run, &pack_transposed, nullptr}; }

}  // namespace grpo::gemm_detail

#endif  // x86-64 (elsewhere gemm.cc defines this path as the plain kernel)
