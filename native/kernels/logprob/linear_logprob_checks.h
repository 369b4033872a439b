// Argument checks of the log-prob C ABI (over logits, and the fused LM head with float32 or bfloat16 inputs), shared by
// the CPU kernels and the CUDA backend so both reject the same inputs with the same statuses and messages.
#pragma once

#include <cmath>
#include <cstdint>

#include "grpo/logprob.h"
#include "runtime/bf16.h"
#include "runtime/error.h"

namespace grpo::linear_logprob_checks {

inline bool finite(float value) { return std::isfinite(value); }
inline bool finite(uint16_t bf16_value) { return bf16::finite(bf16_value); }

// Index of the first non-finite value of values[0, n), or -1. Each block is first tested without a branch, a
// loop the compiler vectorises: an early-exit scan of the LM head's weight (V × H values on every call) stays
// scalar, about 5% of a forward (docs/performance.md).
template <typename T>
int64_t first_nonfinite(const T* values, int64_t n) {
  constexpr int64_t kBlock = 4096;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = begin + kBlock < n ? begin + kBlock : n;
    int bad = 0;
    for (int64_t i = begin; i < end; ++i) bad |= !finite(values[i]);
    if (!bad) continue;
    for (int64_t i = begin; i < end; ++i)
      if (!finite(values[i])) return i;
  }
  return -1;
}

// NULL values pass (an absent optional input).
template <typename T>
void all_finite(const T* values, int64_t n, const char* name) {
  const int64_t bad = values ? first_nonfinite(values, n) : -1;
  if (bad >= 0) fail(GRPO_ERR_NON_FINITE, "%s[%lld] is not finite", name, static_cast<long long>(bad));
}

// Also the CUDA grpo_logprob_* entry points' temperature check (native/cuda/logprob.cu).
inline void temperature(float t) {
  if (!(t > 0.0f) || !std::isfinite(t)) fail(GRPO_ERR_VALUE_RANGE, "temperature must be finite and > 0 (got %g)", t);
}

// The plain grpo_logprob_* entry points' options, shape and pointers (CPU: logprob.cc, CUDA: logprob.cu).
inline void logits_options_and_shape(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                     const grpo_logprob_options* options) {
  if (!options) fail(GRPO_ERR_INVALID_ARGUMENT, "options must not be NULL");
  if (rows < 0 || vocab < 1)
    fail(GRPO_ERR_SHAPE, "rows must be >= 0 and vocab >= 1 (got rows=%lld, vocab=%lld)", static_cast<long long>(rows),
         static_cast<long long>(vocab));
  if (rows > 0 && (!logits || !targets)) fail(GRPO_ERR_INVALID_ARGUMENT, "logits and targets must not be NULL");
  temperature(options->temperature);
}

inline void options_and_shape(int64_t rows, int64_t hidden, int64_t vocab, const grpo_linear_logprob_options* o) {
  if (!o) fail(GRPO_ERR_INVALID_ARGUMENT, "options must not be NULL");
  if (rows < 0 || hidden < 1 || vocab < 1)
    fail(GRPO_ERR_SHAPE, "need rows >= 0, hidden_size >= 1, vocab >= 1 (got %lld, %lld, %lld)", static_cast<long long>(rows),
         static_cast<long long>(hidden), static_cast<long long>(vocab));
  temperature(o->temperature);
  if (o->chunk_rows < 0 || o->chunk_vocab < 0) fail(GRPO_ERR_VALUE_RANGE, "chunk sizes must be >= 0");
}

// Also the CUDA grpo_logprob_* entry points' target check (native/cuda/logprob.cu).
inline void targets(const int32_t* targets, int64_t rows, int64_t vocab, int32_t ignore_index) {
  for (int64_t t = 0; t < rows; ++t)
    if (targets[t] != ignore_index && (targets[t] < 0 || targets[t] >= vocab))
      fail(GRPO_ERR_INDEX_RANGE, "targets[%lld] = %d is outside [0, %lld)", static_cast<long long>(t), targets[t],
           static_cast<long long>(vocab));
}

// hidden and weight are float or uint16_t (bfloat16 bits).
template <typename T>
void inputs(const T* hidden, const T* weight, const float* bias, const int32_t* ids, int64_t rows, int64_t hidden_size,
            int64_t vocab, int32_t ignore_index) {
  targets(ids, rows, vocab, ignore_index);
  all_finite(hidden, rows * hidden_size, "hidden");
  all_finite(weight, vocab * hidden_size, "weight");
  all_finite(bias, bias ? vocab : 0, "bias");
}

template <typename T>
void forward(const T* hidden, const T* weight, const float* bias, const int32_t* ids, int64_t rows, int64_t hidden_size,
             int64_t vocab, const grpo_linear_logprob_options* o, const float* logp) {
  options_and_shape(rows, hidden_size, vocab, o);
  if (rows > 0 && (!hidden || !ids || !logp)) fail(GRPO_ERR_INVALID_ARGUMENT, "hidden, targets and logp must not be NULL");
  if (!weight) fail(GRPO_ERR_INVALID_ARGUMENT, "weight must not be NULL");
  inputs(hidden, weight, bias, ids, rows, hidden_size, vocab, o->ignore_index);
}

template <typename T>
void backward(const T* hidden, const T* weight, const float* bias, const int32_t* ids, int64_t rows, int64_t hidden_size,
              int64_t vocab, const grpo_linear_logprob_options* o, const float* grad_logp, const float* grad_entropy,
              const float* grad_hidden, const float* grad_weight, const float* grad_bias) {
  options_and_shape(rows, hidden_size, vocab, o);
  if (rows > 0 && (!hidden || !ids || !grad_logp || !grad_hidden))
    fail(GRPO_ERR_INVALID_ARGUMENT, "hidden, targets, grad_logp and grad_hidden must not be NULL");
  if (!weight || !grad_weight) fail(GRPO_ERR_INVALID_ARGUMENT, "weight and grad_weight must not be NULL");
  if (bias == nullptr && grad_bias != nullptr) fail(GRPO_ERR_INVALID_ARGUMENT, "grad_bias needs bias");
  inputs(hidden, weight, bias, ids, rows, hidden_size, vocab, o->ignore_index);
  all_finite(grad_logp, rows, "grad_logp");
  all_finite(grad_entropy, grad_entropy ? rows : 0, "grad_entropy");
}

// The forward's lse (and entropy, needed with grad_entropy) handed to grpo_linear_logprob_backward_saved.
inline void saved_stats(const int32_t* ids, int64_t rows, int32_t ignore_index, const float* lse, const float* entropy,
                        const float* grad_entropy) {
  if (rows > 0 && !lse) fail(GRPO_ERR_INVALID_ARGUMENT, "lse must not be NULL");
  if (rows > 0 && grad_entropy && !entropy) fail(GRPO_ERR_INVALID_ARGUMENT, "grad_entropy needs the forward's entropy");
  for (int64_t t = 0; t < rows; ++t) {
    if (ids[t] == ignore_index) continue;
    if (!std::isfinite(lse[t])) fail(GRPO_ERR_NON_FINITE, "lse[%lld] is not finite", static_cast<long long>(t));
    if (entropy && !std::isfinite(entropy[t]))
      fail(GRPO_ERR_NON_FINITE, "entropy[%lld] is not finite", static_cast<long long>(t));
  }
}

// The kept logits of grpo_linear_logprob_forward_logits / _backward_logits (their values are checked row by row as
// the backward reads them).
inline void kept_logits(const float* logits, int64_t rows) {
  if (rows > 0 && !logits) fail(GRPO_ERR_INVALID_ARGUMENT, "logits must not be NULL");
}

}  // namespace grpo::linear_logprob_checks
