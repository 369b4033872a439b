// Run-time SIMD dispatch and vectorisable math shared by the CPU kernels.
//
// Hot loops are written as plain C++ over fixed groups of kLanes floats (one accumulator
// per lane), which GCC and Clang vectorise. GRPO_CLONES compiles a function three times
// (AVX-512, AVX2+FMA, baseline x86-64) and picks one at load time (ifunc), so a prebuilt
// binary runs on any x86-64 CPU and still uses the wide units where they exist.
// Summation order is fixed by the lane layout, never by the thread count.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && !defined(GRPO_NO_CLONES)
#define GRPO_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GRPO_CLONES
#endif

#define GRPO_INLINE inline __attribute__((always_inline))

namespace grpo::simd {

constexpr int kLanes = 16;  // one AVX-512 register of floats; two AVX2 registers

// Below this argument expf underflows to 0 (e^-103.97 is under the smallest denormal).
constexpr float kExpUnderflow = -103.9f;

GRPO_INLINE float bits_to_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// The exp kernel shared by every exp here: Cody–Waite range reduction x = n·ln2 + r, |r| <= ln2/2,
// then a degree-6 polynomial in r (about 2 ulp). Returns p(r) and sets n; the caller scales by 2^n
// in its own type. Branch-free for float and GCC vector types alike, so callers vectorise.
template <typename F>
GRPO_INLINE F exp_polynomial(const F& x, F* n_out) {
  // Adding 1.5·2^23 rounds to the nearest integer in float arithmetic (vectorises, unlike roundf).
  const F n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  F r = x - n * 0.693145751953125f;
  r = r - n * 1.428606765330187e-06f;
  F p = F{} + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  *n_out = n;
  return p;
}

// 2^n for an integral float n in [-126, 127].
GRPO_INLINE float pow2(float n) { return bits_to_float(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23); }

// e^x for x <= 0 (arguments of softmax after subtracting the row max).
// Returns exactly 0 for x < -87.3 (and for -Infinity).
GRPO_INLINE float exp_nonpositive(float x) {
  float n;
  const float p = exp_polynomial(x < -87.3f ? -87.3f : x, &n);
  return x < -87.3f ? 0.0f : p * pow2(n);
}

// Largest finite-or-(-inf) value of x[0, n); `bad` is set when x holds NaN or +Infinity.
float max_checked(const float* x, int64_t n, bool* bad);

}  // namespace grpo::simd
