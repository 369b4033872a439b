#include "dtype16.h"

#include <cstring>

#include "grpo/grpo.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GRPO_HAS_CVTPH 1
#else
#define GRPO_HAS_CVTPH 0
#endif

namespace grpo {

namespace {

void widen_bf16_span(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16::widen(src[i]);
}

void widen_f16_scalar(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f16::widen(src[i]);
}

#if GRPO_HAS_CVTPH
__attribute__((target("avx,f16c"))) void widen_f16_f16c(const uint16_t* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  widen_f16_scalar(src + i, n - i, dst + i);
}

__attribute__((target("avx512f"))) void widen_f16_avx512(const uint16_t* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
  widen_f16_scalar(src + i, n - i, dst + i);
}
#endif

}  // namespace

namespace dtype16_detail {

Widen f16_widening(const char* path) {
  if (std::strcmp(path, "generic") == 0) return widen_f16_scalar;
#if GRPO_HAS_CVTPH
  __builtin_cpu_init();
  if (std::strcmp(path, "avx512") == 0 && __builtin_cpu_supports("avx512f")) return widen_f16_avx512;
  if (std::strcmp(path, "avx2") == 0 && __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c")) return widen_f16_f16c;
#endif
  return nullptr;
}

}  // namespace dtype16_detail

void widen16(Dtype16 dtype, const uint16_t* src, int64_t n, float* dst) {
  static const dtype16_detail::Widen f16 = [] {
    const dtype16_detail::Widen path = dtype16_detail::f16_widening(grpo_cpu_path());
    return path ? path : widen_f16_scalar;
  }();
  (dtype == Dtype16::bf16 ? widen_bf16_span : f16)(src, n, dst);
}

}  // namespace grpo
