// Choosing the next token of each row of a decoding step. This is the one place to switch over to
// the shared sampling kernel (grpo/sampling.h) once it lands; until then: greedy, temperature,
// top-k and top-p with a counter-based RNG keyed by (seed, row, step), so draws never depend on
// thread count or on which other rows are still running.
#pragma once

#include <cstdint>

#include "grpo/model.h"

namespace grpo::model {

struct StepRow {
  int64_t row, step;  // the sequence's index in the batch and its decoding step
};

// logits [n, vocab] → tokens [n], logp [n] (log-softmax(logits / temperature) at the chosen token).
void sample_step(const float* logits, int64_t n, int64_t vocab, const StepRow* rows, const grpo_generate_options& o,
                 int32_t* tokens, float* logp);

}  // namespace grpo::model
