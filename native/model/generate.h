// Batched generation with a KV cache: one prefill over all prompts, then one forward of the
// still-running rows per step (rows that stop leave the batch).
#pragma once

#include "model.h"

namespace grpo::model {

void generate(Model& m, const int32_t* prompts, const int64_t* offsets, int64_t nseq, const grpo_generate_options& o,
              int32_t* out_tokens, float* out_logp, int64_t* out_lengths, uint8_t* truncated);

}  // namespace grpo::model
