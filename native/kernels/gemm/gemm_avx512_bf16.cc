// AVX-512 BF16 micro-kernel: the 14 × 32 tile of gemm_avx512.cc, but each step multiplies a
// k-pair: panels hold 32-bit words of two bfloat16 values (k, k+1), and vdpbf16ps adds both
// products into the float32 accumulators (twice the FMA rate of float32 on this CPU class).
// Only this file's functions carry the BF16 target; nothing here comes from the std library.
#include "gemm_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "gemm_avx512_inl.h"

namespace grpo::gemm_detail {

namespace {

template <int R>
GRPO_AVX512_BF16 void tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta,
                           int /*rows*/, int cols) {
  __m512 lo[R], hi[R];
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) lo[r] = _mm512_setzero_ps(), hi[r] = _mm512_setzero_ps();
  prefetch_tile(c, ldc, R);
  for (int64_t k = 0; k < kc; k += 2, a += kMR, b += kNR) {
    const __m512bh b0 = (__m512bh)_mm512_load_ps(b), b1 = (__m512bh)_mm512_load_ps(b + 16);
#pragma GCC unroll 14
    for (int r = 0; r < R; ++r) {
      const __m512bh ar = (__m512bh)_mm512_set1_ps(a[r]);  // broadcasts the word: the row's k-pair
      lo[r] = _mm512_dpbf16_ps(lo[r], ar, b0);
      hi[r] = _mm512_dpbf16_ps(hi[r], ar, b1);
    }
  }
  write_tile<R>(c, ldc, lo, hi, alpha, beta, cols);
}

// The PairFn: pairs[p · width + i] = (bf16(panel[2p · width + i]), bf16(panel[(2p+1) · width + i])),
// rounded to nearest even; kc is even.
GRPO_AVX512_BF16 void to_pairs(const float* panel, int64_t kc, int width, float* pairs) {
  for (int64_t p = 0; p < kc / 2; ++p) {
    const float* even = panel + 2 * p * width;
    for (int i = 0; i < width; i += 16) {  // width is 14 (A panels) or 32 (B panels)
      const __mmask16 mask = column_mask(width - i);
      const __m512 x = _mm512_maskz_loadu_ps(mask, even + i), y = _mm512_maskz_loadu_ps(mask, even + width + i);
      _mm512_mask_storeu_ps(pairs + p * width + i, mask, pair_words(x, y));
    }
  }
}

constexpr TileFn kTiles[kMR] = {&tile<1>, &tile<2>, &tile<3>,  &tile<4>,  &tile<5>,  &tile<6>,  &tile<7>,
                                 &tile<8>, &tile<9>, &tile<10>, &tile<11>, &tile<12>, &tile<13>, &tile<14>};

void run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int rows, int cols) {
  kTiles[rows - 1](kc, a, b, c, ldc, alpha, beta, rows, cols);
}

}  // namespace

TileKernel avx512_bf16_kernel() {
  TileKernel kernel = avx512_kernel();
  kernel.name = "avx512_bf16";
  kernel.run = &run;
  kernel.to_pairs = &to_pairs;
  kernel.k_block = 2;
  return kernel;
}

}  // namespace grpo::gemm_detail

#endif  // x86-64 (elsewhere gemm.cc defines this path as the plain kernel)
