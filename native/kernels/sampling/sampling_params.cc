#include "sampling_params.h"

#include <cmath>

#include "runtime/error.h"

namespace grpo::sampling {

namespace {

template <typename T>
T value_or(const T* values, int64_t row, T fallback) {
  return values ? values[row] : fallback;
}

template <typename T, typename Ok>
void check_each(const T* values, int64_t rows, const char* name, Ok ok, const char* expectation) {
  if (!values) return;
  for (int64_t r = 0; r < rows; ++r)
    if (!ok(values[r]))
      fail(GRPO_ERR_VALUE_RANGE, "%s[%lld] = %g is outside %s", name, static_cast<long long>(r),
           static_cast<double>(values[r]), expectation);
}

void check_scalars(const grpo_sampling_params& p, int64_t rows) {
  check_each(p.temperature, rows, "temperature", [](float t) { return t >= 0.0f && std::isfinite(t); }, "[0, inf)");
  check_each(p.top_k, rows, "top_k", [](int32_t k) { return k >= 0; }, "[0, 2^31)");
  check_each(p.top_p, rows, "top_p", [](float v) { return v > 0.0f && v <= 1.0f; }, "(0, 1]");
  check_each(p.min_p, rows, "min_p", [](float v) { return v >= 0.0f && v <= 1.0f; }, "[0, 1]");
  check_each(p.repetition_penalty, rows, "repetition_penalty", [](float v) { return v > 0.0f && std::isfinite(v); },
             "(0, inf)");
  check_each(p.presence_penalty, rows, "presence_penalty", [](float v) { return std::isfinite(v); }, "the finite floats");
  check_each(p.frequency_penalty, rows, "frequency_penalty", [](float v) { return std::isfinite(v); }, "the finite floats");
}

void check_history(const grpo_sampling_params& p, int64_t rows, int64_t vocab) {
  if (!p.history_offsets) return;
  if (p.history_offsets[0] != 0) fail(GRPO_ERR_SHAPE, "history_offsets[0] must be 0 (got %d)", p.history_offsets[0]);
  for (int64_t r = 0; r < rows; ++r)
    if (p.history_offsets[r + 1] < p.history_offsets[r])
      fail(GRPO_ERR_SHAPE, "history_offsets must be non-decreasing (offsets[%lld] = %d > offsets[%lld] = %d)",
           static_cast<long long>(r), p.history_offsets[r], static_cast<long long>(r + 1), p.history_offsets[r + 1]);
  if (p.history_offsets[rows] > 0 && !p.history) fail(GRPO_ERR_INVALID_ARGUMENT, "history must not be NULL");
  for (int64_t i = 0; i < p.history_offsets[rows]; ++i)
    if (p.history[i] < 0 || p.history[i] >= vocab)
      fail(GRPO_ERR_INDEX_RANGE, "history[%lld] = %d is outside [0, %lld)", static_cast<long long>(i), p.history[i],
           static_cast<long long>(vocab));
}

}  // namespace

RowParams row_params(const grpo_sampling_params& params, int64_t row, int64_t vocab) {
  RowParams p;
  p.temperature = value_or(params.temperature, row, 1.0f);
  p.top_k = value_or(params.top_k, row, 0);
  p.top_p = value_or(params.top_p, row, 1.0f);
  p.min_p = value_or(params.min_p, row, 0.0f);
  p.penalties = {value_or(params.repetition_penalty, row, 1.0f), value_or(params.frequency_penalty, row, 0.0f),
                 value_or(params.presence_penalty, row, 0.0f)};
  if (params.allow_bits) p.allow = params.allow_bits + row * ((vocab + 31) / 32);
  if (params.history_offsets) {
    p.history = params.history + params.history_offsets[row];
    p.history_length = params.history_offsets[row + 1] - params.history_offsets[row];
  }
  p.seed = params.seed;
  p.step = params.step;
  p.counter_row = params.first_row + static_cast<uint64_t>(row);
  return p;
}

void check_call(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params* params) {
  if (!params) fail(GRPO_ERR_INVALID_ARGUMENT, "params must not be NULL");
  if (rows < 0 || vocab < 1 || vocab > INT32_MAX || rows > UINT32_MAX)
    fail(GRPO_ERR_SHAPE, "rows must be in [0, 2^32] and vocab in [1, 2^31) (got rows=%lld, vocab=%lld)",
         static_cast<long long>(rows), static_cast<long long>(vocab));
  if (rows > 0 && !logits) fail(GRPO_ERR_INVALID_ARGUMENT, "logits must not be NULL");
  if (params->first_row > (uint64_t{1} << 32) - static_cast<uint64_t>(rows))
    fail(GRPO_ERR_VALUE_RANGE, "first_row + rows must be <= 2^32 (got first_row=%llu, rows=%lld)",
         static_cast<unsigned long long>(params->first_row), static_cast<long long>(rows));
  check_scalars(*params, rows);
  check_history(*params, rows, vocab);
}

}  // namespace grpo::sampling
