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

// Whether this compiler builds the x86-64-v4 translation units (code under #pragma GCC target, for
// GCC vectors of 16 floats, one zmm, that the clones keep at 256 bits): call them only where avx512_path().
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GRPO_HAS_AVX512_CODE 1
#else
#define GRPO_HAS_AVX512_CODE 0
#endif

namespace grpo::simd {

constexpr int kLanes = 16;  // one AVX-512 register of floats; two AVX2 registers

// Below this argument expf underflows to 0 (e^-103.97 is under the smallest denormal).
constexpr float kExpUnderflow = -103.9f;

GRPO_INLINE float bits_to_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

GRPO_INLINE uint32_t float_to_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Branch-free selects for the hot loops. GCC's PRE turns a float select that feeds arithmetic
// (`x < c ? c : x; ... x * y`) into control flow by folding the arithmetic on the constant arm, and
// control flow blocks vectorisation on targets without masked stores (x86-64-v3, baseline): the AVX2
// clones came out scalar (docs/performance.md). Integer min and bit masks stay one vector instruction.

// max(x, floor) for a negative floor: the unsigned minimum of the bits, since a non-negative float's
// bits are below 2^31 and a negative float's grow with its magnitude. -Infinity and any NaN with the
// sign bit set give floor; other NaN stay NaN.
GRPO_INLINE float at_least(float x, float floor) {
  const uint32_t a = float_to_bits(x), b = float_to_bits(floor);
  return bits_to_float(a < b ? a : b);
}

// value where keep holds, else +0.
GRPO_INLINE float keep_if(bool keep, float value) {
  return bits_to_float(float_to_bits(value) & (0u - static_cast<uint32_t>(keep)));
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

// Below this argument exp_nonpositive returns exactly 0 (2^n with n >= -126 stays a normal float above it).
constexpr float kExpZeroBelow = -87.3f;

// e^x for x <= 0 (arguments of softmax after subtracting the row max), branch-free so that its
// callers vectorise on every target. Returns exactly 0 for x < -87.3 (and for -Infinity), NaN for NaN.
GRPO_INLINE float exp_nonpositive(float x) {
  float n;
  const float p = exp_polynomial(at_least(x, kExpZeroBelow), &n);
  const float e = p * pow2(n) + (x - x);  // + (x − x): +0, or NaN where x is NaN (at_least may have dropped it)
  return keep_if(!(x < kExpZeroBelow), e);
}

// e^d for d <= 0, as exp_nonpositive (the same range reduction, exactly +0 below -87.3 and for -Infinity,
// NaN for NaN) in fewer vector operations, for the log-prob hot loops: no clamp of the argument, a degree-5
// polynomial, and 2^n read off the rounding sum. t = d·log2(e) + 1.5·2^23 + 127 rounds to an integer whose low
// mantissa bits are n + 127; shifted into the exponent field they are 2^n for n in [-126, 0]. Outside that
// range (d < -87.3, -Infinity) the arithmetic yields garbage, Infinity or NaN, which the final bit mask drops.
constexpr float kRoundBias = 12582912.0f + 127.0f;

GRPO_INLINE float exp_masked(float d) {
  const float t = d * 1.44269504088896341f + kRoundBias;
  const float n = t - kRoundBias;
  float r = d - n * 0.693145751953125f;
  r = r - n * 1.428606765330187e-06f;
  // 1 + r + r²·q(r), q of degree 3 fitted for the least worst relative error of e^r on |r| <= ln2/2 (one
  // FMA fewer than exp_polynomial's degree-6 Taylor, and closer: 2.35 against 2.72 ulp at most, test_runtime).
  float p = 8.333444595e-03f;
  p = p * r + 4.189825431e-02f;
  p = p * r + 1.666689068e-01f;
  p = p * r + 4.999914467e-01f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return keep_if(!(d < kExpZeroBelow), p * bits_to_float(float_to_bits(t) << 23));
}

// A fused sweep computes on data in cache while it reads the next span or row from memory; the hardware
// prefetcher alone left those loads waiting, so the sweep took compute + memory time rather than the larger of
// the two (docs/performance.md). Each 16 floats read, such a sweep requests the line this many floats beyond.
constexpr int64_t kPrefetchAhead = 2048;

// Requests the lines of [p, p + count) from memory.
GRPO_INLINE void prefetch(const float* p, int64_t count) {
  for (int64_t k = 0; k < count; k += 16) __builtin_prefetch(p + k);
}

// Whether grpo_cpu_path() is "avx512": the x86-64-v4 files' functions may run (false in an x86-64-v3 build).
bool avx512_path();

// Largest value of x[0, n) ignoring NaN (+Infinity counts; -Infinity when n = 0 or all are -Infinity or NaN).
float max_of(const float* x, int64_t n);

// Largest finite-or-(-inf) value of x[0, n); `bad` is set when x holds NaN or +Infinity.
float max_checked(const float* x, int64_t n, bool* bad);

}  // namespace grpo::simd
