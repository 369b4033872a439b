// One decoding step's draw for every sequence of the batch through the shared sampler
// (grpo_sample: Philox keyed by (seed, row, step), temperature, top-k/p, min-p, masks, penalties).
#pragma once

#include <cstdint>
#include <vector>

#include "grpo/model.h"

namespace grpo::model {

// Each row's prompt + completion so far (for the penalties), or empty when no penalty is set.
struct History {
  std::vector<int32_t> ids, offsets;  // offsets [nseq + 1]
};

bool uses_penalties(const grpo_sampling_params& p);

// The sampler's parameters of decoding step `step`: `base` with its step and, when `history` is not empty, the
// rows' histories (pointers into `history`, which must outlive the result).
grpo_sampling_params step_params(const grpo_sampling_params& base, int64_t step, const History& history);

// logits [nseq, vocab] (rows of finished sequences are drawn too and ignored) → tokens, logp [nseq].
// logp is the sampler's logp_raw, or log-softmax(logits) at the token for greedy rows.
void sample_step(const float* logits, int64_t nseq, int64_t vocab, const grpo_sampling_params& base, int64_t step,
                 const History& history, int32_t* tokens, float* logp);

}  // namespace grpo::model
