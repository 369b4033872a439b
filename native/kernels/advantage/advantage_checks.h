// Argument checks of the advantage C ABI, shared by the CPU kernels and the CUDA backend so both
// reject the same inputs with the same messages.
#pragma once

#include <cmath>
#include <cstdint>

#include "grpo/advantage.h"
#include "runtime/error.h"

namespace grpo::advantage_checks {

inline void options(const grpo_advantage_options* o) {
  if (!o) fail(GRPO_ERR_INVALID_ARGUMENT, "options must not be NULL");
  if (o->scale < 0 || o->scale > GRPO_ADV_SCALE_NONE) fail(GRPO_ERR_INVALID_ARGUMENT, "scale %d is unknown", o->scale);
  if (o->singleton < 0 || o->singleton > GRPO_ADV_SINGLETON_NAN)
    fail(GRPO_ERR_INVALID_ARGUMENT, "singleton %d is unknown", o->singleton);
  if (o->nan_rewards < 0 || o->nan_rewards > GRPO_ADV_NAN_AS_ZERO)
    fail(GRPO_ERR_INVALID_ARGUMENT, "nan_rewards %d is unknown", o->nan_rewards);
  if (!(o->std_epsilon >= 0.0) || !std::isfinite(o->std_epsilon))
    fail(GRPO_ERR_VALUE_RANGE, "std_epsilon must be finite and >= 0 (got %g)", o->std_epsilon);
}

// Whether any of values[0, n) is ±Infinity (advantage_checks.cc: a vector scan on every SIMD path).
bool any_infinite(const float* values, int64_t n);

// NaN rewards are allowed (the nan_rewards policy handles them); ±Infinity is not.
inline void rewards_of(const float* rewards, int64_t n) {
  if (n > 0 && !rewards) fail(GRPO_ERR_INVALID_ARGUMENT, "rewards must not be NULL");
  if (!any_infinite(rewards, n)) return;
  for (int64_t i = 0; i < n; ++i)
    if (std::isinf(rewards[i])) fail(GRPO_ERR_NON_FINITE, "rewards[%lld] is infinite", static_cast<long long>(i));
}

// Everything grpo_group_advantages checks before it runs (group ids are range-checked while indexed).
inline void group_call(const float* rewards, int64_t n, int64_t group_size, const int32_t* group_ids,
                       int64_t num_groups, const grpo_advantage_options* o, const float* advantages) {
  options(o);
  if (n < 0) fail(GRPO_ERR_SHAPE, "n must be >= 0 (got %lld)", static_cast<long long>(n));
  rewards_of(rewards, n);
  if (n > 0 && !advantages) fail(GRPO_ERR_INVALID_ARGUMENT, "advantages must not be NULL");
  if (group_ids && num_groups < 1)
    fail(GRPO_ERR_SHAPE, "num_groups must be >= 1 (got %lld)", static_cast<long long>(num_groups));
  if (!group_ids && (group_size < 1 || n % group_size != 0))
    fail(GRPO_ERR_SHAPE, "n = %lld is not a multiple of group_size = %lld", static_cast<long long>(n),
         static_cast<long long>(group_size));
}

// Everything grpo_rank_advantages checks before it runs; returns the number of rewards.
inline int64_t rank_call(const float* rewards, int64_t groups, int64_t candidates, int64_t ranks,
                         const grpo_advantage_options* o, const float* advantages) {
  options(o);
  if (groups < 0 || candidates < 1 || ranks < 1)
    fail(GRPO_ERR_SHAPE, "expected groups >= 0, candidates >= 1, ranks >= 1 (got %lld, %lld, %lld)",
         static_cast<long long>(groups), static_cast<long long>(candidates), static_cast<long long>(ranks));
  const int64_t n = groups * candidates * ranks;
  rewards_of(rewards, n);
  if (n > 0 && !advantages) fail(GRPO_ERR_INVALID_ARGUMENT, "advantages must not be NULL");
  return n;
}

inline void broadcast(const float* advantages, const uint8_t* mask, const uint8_t* truncated, const int32_t* prefix_end,
                      int64_t rows, int64_t cols, int32_t truncation, const float* out, const uint8_t* loss_mask) {
  if (truncation < GRPO_TRUNCATION_KEEP || truncation > GRPO_TRUNCATION_DROP_SUFFIX)
    fail(GRPO_ERR_INVALID_ARGUMENT, "truncation %d is unknown", truncation);
  if (rows < 0 || cols < 0) fail(GRPO_ERR_SHAPE, "expected rows, cols >= 0");
  if (rows > 0 && (!advantages || !mask || !out || !loss_mask))
    fail(GRPO_ERR_INVALID_ARGUMENT, "advantages, mask, out and loss_mask must not be NULL");
  if (rows > 0 && truncation != GRPO_TRUNCATION_KEEP && !truncated)
    fail(GRPO_ERR_INVALID_ARGUMENT, "truncated must not be NULL unless truncation is KEEP");
  if (rows > 0 && truncation == GRPO_TRUNCATION_DROP_SUFFIX && !prefix_end)
    fail(GRPO_ERR_INVALID_ARGUMENT, "prefix_end must not be NULL with DROP_SUFFIX");
}

}  // namespace grpo::advantage_checks
