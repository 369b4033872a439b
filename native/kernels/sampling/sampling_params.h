// Per-row parameters of the sampler, read from grpo_sampling_params (NULL arrays give the defaults),
// and the up-front validation of a call: every error names the argument and the row.
#pragma once

#include <cstdint>

#include "grpo/sampling.h"
#include "sampling_penalties.h"

namespace grpo::sampling {

struct RowParams {
  float temperature = 1.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  Penalties penalties;
  const uint32_t* allow = nullptr;    // [ceil(vocab / 32)] or NULL
  const int32_t* history = nullptr;   // [history_length]
  int64_t history_length = 0;
  uint64_t seed = 0, step = 0;
  uint64_t counter_row = 0;  // the Philox counter's row: first_row + row
};

RowParams row_params(const grpo_sampling_params& params, int64_t row, int64_t vocab);

// Throws grpo::Error for NULL pointers, bad shapes, out-of-range parameters and history ids.
void check_call(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params* params);

}  // namespace grpo::sampling
