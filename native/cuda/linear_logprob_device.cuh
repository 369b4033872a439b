// Device-pointer entry points of the fused LM head log-prob (linear_logprob.cu) for callers whose tensors
// already live on the GPU (the built-in model, native/cuda/model/). No bias. The caller has checked the
// targets; NaN / +Infinity logits still fail with the C ABI's status and message.
#pragma once

#include <cstdint>

#include "grpo/logprob.h"

namespace grpo::cuda {

// hidden [rows, hidden_size], weight [vocab, hidden_size], targets [rows] on the device;
// logp [rows] and entropy [rows] (or NULL) on the HOST.
void linear_logprob_forward_device(const float* hidden, const float* weight, const int32_t* targets, int64_t rows,
                                   int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options& options,
                                   float* logp, float* entropy);

// All device pointers: grad_logp [rows], grad_entropy [rows] or NULL; grad_hidden [rows, hidden_size] and
// grad_weight [vocab, hidden_size] are added into.
void linear_logprob_backward_device(const float* hidden, const float* weight, const int32_t* targets, int64_t rows,
                                    int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options& options,
                                    const float* grad_logp, const float* grad_entropy, float* grad_hidden,
                                    float* grad_weight);

}  // namespace grpo::cuda
