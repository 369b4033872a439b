// Plain sort-based reference of the sampler (double precision): the processed distribution of
// each row, by sorting the row and walking it, exactly as docs/sampling.md defines the steps.
#pragma once

#include <cstdint>

#include "grpo/sampling.h"

namespace grpo::reference {

// probs [rows, vocab]: the distribution a draw uses; raw_logp [rows, vocab]: log-probs after mask,
// penalties and temperature, before truncation (-Infinity where the probability is 0; 0 at the argmax
// of greedy rows). Rows with no allowed finite logit are left as NaN.
void sampling_probs(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params& params, double* probs,
                    double* raw_logp);

}  // namespace grpo::reference
