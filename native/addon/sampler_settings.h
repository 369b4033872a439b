// The sampler settings object shared by `sample`, `samplingProbs` and `modelGenerate` (lib/binding/types.ts,
// NativeSamplingParams), read by name into grpo_sampling_params (sampling_addon.cc).
#pragma once

#include "grpo/sampling.h"
#include "napi_util.h"

namespace grpo::addon {

// The settings object `value` (named `name` in errors). The per-row arrays are checked for length and copied in an
// async call (they stay owned by `memory`).
grpo_sampling_params sampler_settings(Napi::Value value, const char* name, int64_t rows, int64_t vocab, CallMemory& memory);

}  // namespace grpo::addon
