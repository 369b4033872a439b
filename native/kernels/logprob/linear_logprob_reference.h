// Plain references of the fused LM-head log-prob: materialise logits = hidden · weightᵀ + bias (double sums)
// and apply the plain log-prob references; bfloat16 inputs are widened to float first.
#pragma once

#include <cstdint>
#include <vector>

namespace grpo::reference {

// hidden [rows, H], weight [vocab, H], bias [vocab] or NULL -> logp [rows], entropy [rows]
void linear_logprob_forward(const float* hidden, const float* weight, const float* bias, const int32_t* targets,
                            int64_t rows, int64_t hidden_size, int64_t vocab, double temperature, int32_t ignore_index,
                            double* logp, double* entropy);

// grad_hidden [rows, H], grad_weight [vocab, H], grad_bias [vocab] (overwritten) from grad_logp, grad_entropy (nullable)
void linear_logprob_backward(const float* hidden, const float* weight, const float* bias, const int32_t* targets,
                             int64_t rows, int64_t hidden_size, int64_t vocab, double temperature, int32_t ignore_index,
                             const float* grad_logp, const float* grad_entropy, double* grad_hidden, double* grad_weight,
                             double* grad_bias);

// The float values of bfloat16 bit patterns (exact).
std::vector<float> widen_bf16(const uint16_t* values, int64_t n);

}  // namespace grpo::reference
