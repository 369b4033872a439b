// grpo_sample (sampling.cu) on logits that already live on the GPU (the built-in model's generation).
#pragma once

#include <cstdint>

#include "grpo/sampling.h"

namespace grpo::cuda::sampling {

// logits [rows, vocab] on the device; params (and its history / allow arrays) and tokens, logp_raw [rows]
// (logp_raw may be NULL) on the host. The same checks, draws and errors as grpo_sample.
void sample_device(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params& params, int32_t* tokens,
                   float* logp_raw);

}  // namespace grpo::cuda::sampling
