// AMX-BF16 micro-kernel: a 32 × 32 tile of C in four 16 × 16 float32 tile registers (tmm0-3). Each step of
// 32 k loads two A tiles (tmm4-5: 16 rows × 32 bf16) and two B tiles (tmm6-7: 16 k-pairs × 16 columns, the
// VNNI layout) and runs tdpbf16ps four times: the products of bf16-rounded inputs summed in float32, as the
// AVX512_BF16 kernel, but the hardware orders each step's 32-term sum its own way, so the two kernels may
// differ in the last bits. Each C element still sums its k-chunk alone, from zero, in one tile register:
// the result is the same for any thread count.
// Panels (k past kc is zero in both, padded to a multiple of 32):
//   A [kc/32][32 rows][16 words]: word q of a row is the bf16 pair (k = 2q, 2q + 1); one A tile is 1 KB.
//   B [kc/2][32 columns] words: the AVX512_BF16 kernel's layout; a B tile is 16 rows 128 bytes apart.
// The tile configuration is loaded when a thread starts a block of tasks and released when it ends it
// (enter / leave), so no tile state outlives a GEMM on any thread. gemm.cc picks this kernel only where
// amx_bf16_usable() (runtime/amx.h) holds. Only this file's functions carry the AMX target; nothing here
// comes from the std library.
#include "gemm_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "gemm_avx512_inl.h"

#define GRPO_AMX __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,avx512bf16,amx-tile,amx-bf16")))

namespace grpo::gemm_detail {

namespace {

constexpr int kTile = 16;   // rows and float32 columns of a C tile, k-pairs of a B tile, words of an A row
constexpr int kStep = 32;   // k per step
constexpr int kWidth = 32;  // rows of an A panel, columns of a B panel: two tiles
constexpr int kTileBytes = 64;

// The 64-byte operand of ldtilecfg, palette 1: eight tiles of 16 rows × 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

GRPO_AMX void enter() {
  TileConfig config = {};
  config.palette = 1;
  for (int t = 0; t < 8; ++t) config.colsb[t] = kTileBytes, config.rows[t] = kTile;
  // Not _tile_loadconfig: GCC 12's operand covers only 8 of the 64 bytes, so the stores above could be dropped.
  __asm__ volatile("ldtilecfg %0" ::"m"(config));
}

GRPO_AMX void leave() { _tile_release(); }

GRPO_AMX void run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int rows,
                  int cols) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t k = 0; k < kc; k += kStep, a += kWidth * kTile, b += kTile * kWidth) {
    _tile_loadd(4, a, kTileBytes);
    _tile_loadd(5, a + kTile * kTile, kTileBytes);
    _tile_loadd(6, b, kWidth * 4);
    _tile_loadd(7, b + kTile, kWidth * 4);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  alignas(64) float acc[kWidth * kWidth];  // [32, 32]
  _tile_stored(0, acc, kWidth * 4);
  _tile_stored(1, acc + kTile, kWidth * 4);
  _tile_stored(2, acc + kTile * kWidth, kWidth * 4);
  _tile_stored(3, acc + kTile * kWidth + kTile, kWidth * 4);
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  const __mmask16 m0 = column_mask(cols), m1 = column_mask(cols - kTile);
  for (int r = 0; r < rows; ++r) {
    store(c + r * ldc, m0, _mm512_load_ps(acc + r * kWidth), va, vb, beta != 0.0f);
    if (m1) store(c + r * ldc + kTile, m1, _mm512_load_ps(acc + r * kWidth + kTile), va, vb, beta != 0.0f);
  }
}

GRPO_AMX inline __mmask16 mask_of(int64_t n) { return column_mask(n > kTile ? kTile : static_cast<int>(n)); }

// 16 × 16 words of op(X): 16 rows i (from src, `count` of them real) × 16 k-pairs (32 k, `left` of them real),
// zero elsewhere. out[t] is row t (by_row) or pair t. Rows running along k convert straight to their pairs;
// stored rows running along i give pairs of two of them; a transpose turns either into the other.
GRPO_AMX void block(const float* src, int64_t ld, bool along_k, int count, int64_t left, bool by_row, __m512 out[16]) {
  if (along_k) {
    const __mmask16 low_k = mask_of(left), high_k = mask_of(left - kTile);
    for (int i = 0; i < kTile; ++i) {
      const float* row = src + i * ld;  // past count: not read
      const __m512 low = _mm512_maskz_loadu_ps(i < count ? low_k : 0, row);
      const __m512 high = _mm512_maskz_loadu_ps(i < count ? high_k : 0, row + kTile);
      out[i] = (__m512)_mm512_cvtne2ps_pbh(high, low);  // 32 bf16 in k order: word q is the pair (2q, 2q + 1)
    }
  } else {
    const __mmask16 mask = mask_of(count);
    for (int q = 0; q < kTile; ++q) {  // rows past kc: not read
      const __m512 even = _mm512_maskz_loadu_ps(2 * q < left ? mask : 0, src + 2 * q * ld);
      const __m512 odd = _mm512_maskz_loadu_ps(2 * q + 1 < left ? mask : 0, src + (2 * q + 1) * ld);
      out[q] = pair_words(even, odd);
    }
  }
  if (along_k != by_row) transpose16(out);
}

// Either panel: A (by_row) [kc/32][32][16] words, B [kc/2][32] words; `src` is op(X)[0, 0] (the PackFn).
GRPO_AMX void pack(const float* src, int64_t ld, bool along_k, int count, int64_t kc, bool by_row, float* panel) {
  for (int64_t k0 = 0; k0 < kc; k0 += kStep)
    for (int g = 0; g < kWidth; g += kTile) {
      __m512 words[kTile];
      block(along_k ? src + g * ld + k0 : src + k0 * ld + g, ld, along_k, count - g, kc - k0, by_row, words);
      float* out = by_row ? panel + (k0 + g) * kTile : panel + k0 / 2 * kWidth + g;
      const int64_t stride = by_row ? kTile : kWidth;
      for (int t = 0; t < kTile; ++t) _mm512_storeu_ps(out + t * stride, words[t]);
    }
}

void pack_a(const float* src, int64_t ld, bool along_k, int count, int64_t kc, float* panel) {
  pack(src, ld, along_k, count, kc, true, panel);
}

void pack_b(const float* src, int64_t ld, bool along_k, int count, int64_t kc, float* panel) {
  pack(src, ld, along_k, count, kc, false, panel);
}

}  // namespace

TileKernel amx_bf16_kernel() {
  TileKernel kernel = avx512_bf16_kernel();  // its to_pairs B layout is this kernel's
  kernel.name = "amx_bf16";
  kernel.mr = kWidth, kernel.nr = kWidth;
  kernel.run = &run;
  kernel.k_block = kStep;
  kernel.pack_a = &pack_a, kernel.pack_b = &pack_b;
  kernel.enter = &enter, kernel.leave = &leave;
  return kernel;
}

}  // namespace grpo::gemm_detail

#endif  // x86-64 (elsewhere gemm.cc defines this path as the plain kernel)
