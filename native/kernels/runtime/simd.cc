#include "simd.h"

#include <cstring>
#include <limits>

#include "grpo/grpo.h"

namespace grpo::simd {

namespace {

// Lanes [0, 8) and [8, 16) of the kLanes lane maxima, as GCC vectors written in the clones' own bodies (inline
// helpers are lowered for the baseline target first): the lane loops below, written per float, came out scalar
// in every clone (GCC 12 does not vectorise a select-based float maximum over 16 scalarised lanes).
typedef float Half __attribute__((vector_size(32)));
typedef int32_t HalfMask __attribute__((vector_size(32)));
constexpr int kHalf = kLanes / 2;

}  // namespace

GRPO_CLONES float max_checked(const float* x, int64_t n, bool* bad) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  Half low_max = Half{} - kInf, high_max = low_max, v;
  HalfMask low_bad = {}, high_bad = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    std::memcpy(&v, x + i, sizeof v);
    low_bad |= !(v < kInf);  // NaN and +Infinity both fail v < inf
    low_max = v > low_max ? v : low_max;
    std::memcpy(&v, x + i + kHalf, sizeof v);
    high_bad |= !(v < kInf);
    high_max = v > high_max ? v : high_max;
  }
  float lane_max[kLanes];
  int32_t lane_bad[kLanes];
  std::memcpy(lane_max, &low_max, sizeof low_max), std::memcpy(lane_max + kHalf, &high_max, sizeof high_max);
  std::memcpy(lane_bad, &low_bad, sizeof low_bad), std::memcpy(lane_bad + kHalf, &high_bad, sizeof high_bad);
  for (int l = 0; i < n; ++i, ++l) {
    lane_bad[l] |= !(x[i] < kInf);
    lane_max[l] = x[i] > lane_max[l] ? x[i] : lane_max[l];
  }
  float result = -kInf;
  int32_t any_bad = 0;
  for (int l = 0; l < kLanes; ++l) {
    result = lane_max[l] > result ? lane_max[l] : result;
    any_bad |= lane_bad[l];
  }
  *bad = any_bad != 0;
  return result;
}

GRPO_CLONES float max_of(const float* x, int64_t n) {
  Half low_max = Half{} - std::numeric_limits<float>::infinity(), high_max = low_max, v;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    std::memcpy(&v, x + i, sizeof v);
    low_max = v > low_max ? v : low_max;
    std::memcpy(&v, x + i + kHalf, sizeof v);
    high_max = v > high_max ? v : high_max;
  }
  float lane_max[kLanes];
  std::memcpy(lane_max, &low_max, sizeof low_max), std::memcpy(lane_max + kHalf, &high_max, sizeof high_max);
  for (int l = 0; i < n; ++i, ++l) lane_max[l] = x[i] > lane_max[l] ? x[i] : lane_max[l];
  float result = lane_max[0];
  for (int l = 1; l < kLanes; ++l) result = lane_max[l] > result ? lane_max[l] : result;
  return result;
}

bool avx512_path() {
  static const bool avx512 = std::strcmp(grpo_cpu_path(), "avx512") == 0;
  return avx512;
}

}  // namespace grpo::simd

extern "C" const char* grpo_cpu_path(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
#if defined(GRPO_NO_CLONES) && defined(__AVX2__) && !defined(__AVX512F__)
  // A one-level build (CMake GRPO_MARCH=x86-64-v3): every kernel, the GEMM's too, takes the AVX2 path.
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
#endif
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
#endif
  return "generic";
}
