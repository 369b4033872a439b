// Plain, obviously correct references (double precision) for the log-prob kernels.
#pragma once

#include <cstdint>

namespace grpo::reference {

// logits [rows, vocab] -> logp [rows], entropy [rows] (ignore_index rows give 0)
void logprob_forward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab, double temperature,
                     int32_t ignore_index, double* logp, double* entropy);

// grad_logits [rows, vocab] from grad_logp [rows] and grad_entropy [rows] (nullable)
void logprob_backward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab, double temperature,
                      int32_t ignore_index, const float* grad_logp, const float* grad_entropy, double* grad_logits);

}  // namespace grpo::reference
