// Argument checks of the model C ABI (grpo/model.h), shared by the CPU model (model_api.cc) and the CUDA model
// (native/cuda/model/model_api.cu), so both reject the same calls with the same statuses and messages.
#pragma once

#include <cmath>
#include <cstdint>

#include "grpo/model.h"
#include "params.h"
#include "runtime/error.h"

namespace grpo::model {

inline void need(const void* pointer, const char* name) {
  if (!pointer) fail(GRPO_ERR_INVALID_ARGUMENT, "%s must not be NULL", name);
}

// The tensor called `name`, which must have exactly `numel` elements.
inline const TensorSlot& slot_of(const Layout& layout, const char* name, int64_t numel) {
  need(name, "name");
  const TensorSlot* slot = layout.find(name);
  if (!slot) fail(GRPO_ERR_INVALID_ARGUMENT, "the model has no tensor named \"%s\"", name);
  if (slot->size() != numel)
    fail(GRPO_ERR_SHAPE, "tensor \"%s\" has %lld elements, got a buffer of %lld", name, static_cast<long long>(slot->size()),
         static_cast<long long>(numel));
  return *slot;
}

inline void tensor_info(const Layout& layout, int64_t index, const char** name, int64_t* ndim, int64_t shape[2]) {
  const auto& slots = layout.slots;
  if (index < 0 || index >= static_cast<int64_t>(slots.size()))
    fail(GRPO_ERR_INDEX_RANGE, "tensor index %lld is outside [0, %zu)", static_cast<long long>(index), slots.size());
  const auto& s = slots[index];
  *name = s.name.c_str();
  *ndim = s.cols == 1 && !s.matrix ? 1 : 2;
  shape[0] = s.rows;
  shape[1] = s.cols;
}

inline void check_tensor_values(const char* name, const float* values, int64_t numel) {
  need(values, "values");
  for (int64_t i = 0; i < numel; ++i)
    if (!std::isfinite(values[i])) fail(GRPO_ERR_NON_FINITE, "tensor \"%s\" element %lld is not finite", name, static_cast<long long>(i));
}

inline void check_set_optimizer(const float* m, const float* v, int64_t step) {
  need(m, "m");
  need(v, "v");
  if (step < 0) fail(GRPO_ERR_VALUE_RANGE, "step must be >= 0 (got %lld)", static_cast<long long>(step));
}

inline void check_score_args(const void* model, const int32_t* tokens, const int64_t* seq_offsets, const int32_t* targets,
                             const grpo_score_options* options, const float* logp) {
  for (const void* p : {model, static_cast<const void*>(tokens), static_cast<const void*>(seq_offsets),
                        static_cast<const void*>(targets), static_cast<const void*>(options), static_cast<const void*>(logp)})
    need(p, "model, tokens, seq_offsets, targets, options and logp");
}

inline void check_generate_args(const void* model, const int32_t* prompts, const int64_t* prompt_offsets,
                                const grpo_generate_options* options, const int32_t* out_tokens, const float* out_logp,
                                const int64_t* out_lengths, const uint8_t* truncated) {
  for (const void* p : {model, static_cast<const void*>(prompts), static_cast<const void*>(prompt_offsets),
                        static_cast<const void*>(options), static_cast<const void*>(out_tokens), static_cast<const void*>(out_logp),
                        static_cast<const void*>(out_lengths), static_cast<const void*>(truncated)})
    need(p, "model, prompts, prompt_offsets, options and the outputs");
  const auto& o = *options;
  if (o.max_new_tokens < 0) fail(GRPO_ERR_VALUE_RANGE, "max_new_tokens must be >= 0 (got %lld)", static_cast<long long>(o.max_new_tokens));
  need(o.sampling, "options->sampling (the sampler's parameters are checked on the first step)");
  if (o.num_stop_tokens > 0) need(o.stop_tokens, "stop_tokens");
}

}  // namespace grpo::model
