// The non-temporal stores of stream_store.h at the width of the CPU's path (grpo_cpu_path(), as the GEMM's
// micro-kernels): 64-byte stores on AVX-512, 32 on AVX2, 16 on the baseline; a scalar head up to the
// store's alignment and a scalar tail. The multiply is the same IEEE product at every width.
#include "stream_store.h"

#include <cstring>

#include "grpo/grpo.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace grpo::simd {

namespace {

// The scalar head until out is `bytes`-aligned, at most n floats.
int64_t unaligned_head(const float* out, int64_t n, int64_t bytes) {
  const int64_t offset = static_cast<int64_t>(reinterpret_cast<uintptr_t>(out) % bytes);
  const int64_t head = offset == 0 ? 0 : (bytes - offset) / static_cast<int64_t>(sizeof(float));
  return head < n ? head : n;
}

void scaled_scalar(float* out, const float* x, int64_t begin, int64_t end, float factor) {
  for (int64_t i = begin; i < end; ++i) out[i] = x[i] * factor;
}

#if defined(__x86_64__) && defined(__GNUC__)

void stream_scaled_sse(float* out, const float* x, int64_t n, float factor) {
  int64_t i = unaligned_head(out, n, 16);
  scaled_scalar(out, x, 0, i, factor);
  const __m128 f = _mm_set1_ps(factor);
  for (; i + 4 <= n; i += 4) _mm_stream_ps(out + i, _mm_mul_ps(_mm_loadu_ps(x + i), f));
  scaled_scalar(out, x, i, n, factor);
}

__attribute__((target("avx2"))) void stream_scaled_avx2(float* out, const float* x, int64_t n, float factor) {
  int64_t i = unaligned_head(out, n, 32);
  scaled_scalar(out, x, 0, i, factor);
  const __m256 f = _mm256_set1_ps(factor);
  for (; i + 8 <= n; i += 8) _mm256_stream_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), f));
  scaled_scalar(out, x, i, n, factor);
}

__attribute__((target("avx512f"))) void stream_scaled_avx512(float* out, const float* x, int64_t n, float factor) {
  int64_t i = unaligned_head(out, n, 64);
  scaled_scalar(out, x, 0, i, factor);
  const __m512 f = _mm512_set1_ps(factor);
  for (; i + 16 <= n; i += 16) _mm512_stream_ps(out + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), f));
  scaled_scalar(out, x, i, n, factor);
}

using StreamScaled = void (*)(float*, const float*, int64_t, float);

StreamScaled stream_scaled_kernel(const char* path) {
  if (std::strcmp(path, "avx512") == 0) return &stream_scaled_avx512;
  return std::strcmp(path, "avx2") == 0 ? &stream_scaled_avx2 : &stream_scaled_sse;
}

#endif

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__)

void stream_scaled(float* out, const float* x, int64_t n, float factor) {
  static const StreamScaled kernel = stream_scaled_kernel(grpo_cpu_path());
  kernel(out, x, n, factor);
}

void stream_scaled_on(const char* path, float* out, const float* x, int64_t n, float factor) {
  stream_scaled_kernel(path)(out, x, n, factor);
}

void stream_zero(float* out, int64_t n) {
  int64_t i = unaligned_head(out, n, 16);
  for (int64_t j = 0; j < i; ++j) out[j] = 0.0f;
  for (; i + 4 <= n; i += 4) _mm_stream_ps(out + i, _mm_setzero_ps());
  for (; i < n; ++i) out[i] = 0.0f;
}

void stream_fence() { _mm_sfence(); }

#else  // no non-temporal store: cached stores, the same values

void stream_scaled(float* out, const float* x, int64_t n, float factor) { scaled_scalar(out, x, 0, n, factor); }

void stream_scaled_on(const char*, float* out, const float* x, int64_t n, float factor) { stream_scaled(out, x, n, factor); }

void stream_zero(float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = 0.0f;
}

void stream_fence() {}

#endif

}  // namespace grpo::simd
