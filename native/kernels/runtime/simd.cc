#include "simd.h"

#include <cstring>
#include <limits>

#include "grpo/grpo.h"

namespace grpo::simd {

GRPO_CLONES float max_checked(const float* x, int64_t n, bool* bad) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float lane_max[kLanes];
  int lane_bad[kLanes];
  for (int l = 0; l < kLanes; ++l) lane_max[l] = -kInf, lane_bad[l] = 0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const float v = x[i + l];
      lane_bad[l] |= !(v < kInf);  // NaN and +Infinity both fail v < inf
      lane_max[l] = v > lane_max[l] ? v : lane_max[l];
    }
  }
  for (int l = 0; i < n; ++i, ++l) {
    lane_bad[l] |= !(x[i] < kInf);
    lane_max[l] = x[i] > lane_max[l] ? x[i] : lane_max[l];
  }
  float result = -kInf;
  int any_bad = 0;
  for (int l = 0; l < kLanes; ++l) {
    result = lane_max[l] > result ? lane_max[l] : result;
    any_bad |= lane_bad[l];
  }
  *bad = any_bad != 0;
  return result;
}

GRPO_CLONES float max_of(const float* x, int64_t n) {
  float lane_max[kLanes];
  for (int l = 0; l < kLanes; ++l) lane_max[l] = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lane_max[l] = x[i + l] > lane_max[l] ? x[i + l] : lane_max[l];
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
