// Argument checks the CUDA entry points run on the host before copying anything, with the CPU
// kernels' statuses and messages (the TS layer checks first; these keep the C ABI safe on its own).
#pragma once

#include <cmath>
#include <cstdint>

#include "error.h"

namespace grpo::cuda {

inline void check_targets(const int32_t* targets, int64_t rows, int64_t vocab, int32_t ignore_index) {
  for (int64_t t = 0; t < rows; ++t)
    if (targets[t] != ignore_index && (targets[t] < 0 || targets[t] >= vocab))
      fail(GRPO_ERR_INDEX_RANGE, "targets[%lld] = %d is outside [0, %lld)", static_cast<long long>(t), targets[t],
           static_cast<long long>(vocab));
}

// NULL values pass (an absent optional input).
inline void check_finite(const float* values, int64_t n, const char* name) {
  if (!values) return;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i])) fail(GRPO_ERR_NON_FINITE, "%s[%lld] is not finite", name, static_cast<long long>(i));
}

inline void check_temperature(float temperature) {
  if (!(temperature > 0.0f) || !std::isfinite(temperature))
    fail(GRPO_ERR_VALUE_RANGE, "temperature must be finite and > 0 (got %g)", temperature);
}

}  // namespace grpo::cuda
