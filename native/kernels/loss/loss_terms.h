// The vector helpers of the CPU's policy loss: the GCC vector types of the vectorised row
// (loss_fast.cc) and a branch-free e^x for floats and vectors. The scalar terms shared with the
// CUDA backend are in loss_token.h.
#pragma once

#include <cstdint>

#include "runtime/simd.h"

// Vector values only pass between inlined helpers: no ABI boundary is involved.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace grpo::loss {

// The vector types of the vectorised row (loss_fast.cc): eight floats, one ymm or two xmm. The inline
// helpers are lowered for the baseline target before they are inlined into the clones: 32-byte
// vectors survive that as pairs of SSE operations, 64-byte ones were scalarised (measured). The
// AVX-512 row (loss_fast_avx512.cc) is a file compiled for x86-64-v4 as a whole, where sixteen
// floats are one zmm: the clones' v4 target keeps GCC's loops at 256 bits.
constexpr int kVectorLanes = 8, kWideLanes = 16;
typedef float vf __attribute__((vector_size(4 * kVectorLanes)));
typedef float vfw __attribute__((vector_size(4 * kWideLanes)));

template <typename F> GRPO_INLINE F splat(float x) { return F{} + x; }
GRPO_INLINE float pick(bool c, float x, float y) { return c ? x : y; }
template <typename I, typename F> GRPO_INLINE F pick(const I& c, const F& x, const F& y) { return c ? x : y; }
using simd::pow2;
template <typename F> GRPO_INLINE F pow2(const F& n) {
  using I = decltype(n < n);  // the int32 vector of F's width
  const I bits = (__builtin_convertvector(n, I) + 127) << 23;
  return reinterpret_cast<F>(bits);
}
template <typename F> GRPO_INLINE F clamp_to(const F& x, const F& lo, const F& hi) { return pick(x < lo, lo, pick(x > hi, hi, x)); }

// e^x for any x (float or vf), branch-free so that the loops calling it vectorise: the range
// reduction and polynomial of simd::exp_nonpositive (about 2 ulp), with x clamped to [-87, 87]
// (e^x saturates at 1.6e-38 and 6.1e37 instead of reaching 0 / +Infinity).
template <typename F> GRPO_INLINE F exp_any(const F& x) {
  F n;
  const F p = simd::exp_polynomial(clamp_to(x, splat<F>(-87.0f), splat<F>(87.0f)), &n);
  return p * pow2(n);
}

}  // namespace grpo::loss
