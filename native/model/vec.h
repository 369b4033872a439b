// Lane-split reductions for the model's hot loops: kLanes partial sums combined in a fixed order, so
// GCC vectorises them inside GRPO_CLONES functions (a plain `sum += a[i] * b[i]` stays scalar without
// -ffast-math) and the result depends on n alone, never on threads or tiling.
#pragma once

#include <cmath>
#include <cstdint>

#include "runtime/simd.h"

// On a loop moved from the baseline build into clones that keeps the baseline's bits: no contraction of
// a·b + c into one FMA, which the AVX2 and AVX-512 clones would otherwise do (one rounding instead of two).
#define GRPO_NO_CONTRACTION __attribute__((optimize("fp-contract=off")))

namespace grpo::model::vec {

using simd::kLanes;

// Pairwise sum of kLanes partials (fixed tree).
GRPO_INLINE float combine(float* acc) {
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0];
}

// Σ a[i]·b[i] (the same sums as one row of dot4)
GRPO_INLINE float dot(const float* a, const float* b, int64_t n) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  for (int l = 0; i + l < n; ++l) acc[l] += a[i + l] * b[i + l];
  return combine(acc);
}

// out[r] = Σ a[i]·b[r·ld + i] for r < 4: four rows of b against one a, four independent FMA chains.
GRPO_INLINE void dot4(const float* a, const float* b, int64_t ld, int64_t n, float* out) {
  float acc[4][kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int r = 0; r < 4; ++r)
      for (int l = 0; l < kLanes; ++l) acc[r][l] += a[i + l] * b[r * ld + i + l];
  for (int r = 0; r < 4; ++r) {
    for (int l = 0; i + l < n; ++l) acc[r][l] += a[i + l] * b[r * ld + i + l];
    out[r] = combine(acc[r]);
  }
}

// 1 / (1 + e^-z) as (z < 0 ? e : 1) / (1 + e) with e = e^-|z|, which never overflows. Branch-free (the exp of
// simd.h, a sign-bit clear, a bit-mask select) so the AVX2 clones of its callers vectorise; std::exp and float
// selects do not (docs/performance.md).
GRPO_INLINE float sigmoid(float z) {
  const float e = simd::exp_nonpositive(-std::fabs(z));
  const bool negative = z < 0.0f;
  return (simd::keep_if(negative, e) + simd::keep_if(!negative, 1.0f)) / (1.0f + e);
}

// y[i] += s·x[i]
GRPO_INLINE void axpy(float s, const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += s * x[i];
}

// y[i] += Σ_r s[r]·x[r·ld + i] for r < 4 (y read and written once per four rows)
GRPO_INLINE void axpy4(const float* s, const float* x, int64_t ld, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += (s[0] * x[i] + s[1] * x[ld + i]) + (s[2] * x[2 * ld + i] + s[3] * x[3 * ld + i]);
}

}  // namespace grpo::model::vec
