// Internal to the fused LM-head log-prob: the tile driver (linear_logprob.cc) over a Head, the matrix
// products for one storage precision of hidden and weight (float32 in linear_logprob.cc, bfloat16 in
// linear_logprob_bf16.cc). The driver owns the online log-sum-exp, the bias and the gradient of each tile.
#pragma once

#include <cstdint>

#include "grpo/logprob.h"
#include "linear_logprob_checks.h"
#include "runtime/error.h"

namespace grpo::linear_logprob {

struct Shape {
  int64_t rows, hidden, vocab, chunk_rows, chunk_vocab;
};

// After linear_logprob_checks::options_and_shape: the shape with the chunk sizes resolved.
Shape make_shape(int64_t rows, int64_t hidden, int64_t vocab, const grpo_linear_logprob_options& o);

class Head {
 public:
  virtual ~Head() = default;
  // tile [n, cols] = hidden[r0 .. r0 + n) · weight[v0 .. v0 + cols)ᵀ
  virtual void logits(int64_t r0, int64_t n, int64_t v0, int64_t cols, float* tile) = 0;
  // grad_hidden[r0 ..] += tile · weight[v0 ..];  grad_weight[v0 ..] += tileᵀ · hidden[r0 ..] unless grad_weight is
  // null (a frozen weight)  (may overwrite tile)
  virtual void multiply_out(int64_t r0, int64_t n, int64_t v0, int64_t cols, float* tile, float* grad_hidden,
                            float* grad_weight) = 0;
};

struct Gradients {
  const float* logp;
  const float* entropy;
  float *hidden, *weight, *bias;
};

// The forward's per-row outputs, reused by the backward in place of its statistics pass (lse null: none saved).
struct SavedStats {
  const float* lse;      // [rows] log-sum-exp of logits / temperature
  const float* entropy;  // [rows], or null when no grad_entropy is given
};

void forward(Head& head, const float* bias, const int32_t* targets, const Shape& s, const grpo_linear_logprob_options& o,
             float* logp, float* entropy, float* lse);

void backward(Head& head, const float* bias, const int32_t* targets, const Shape& s, const grpo_linear_logprob_options& o,
              const Gradients& g, bool accumulate, const SavedStats& saved);

// The float32 backward with a frozen weight (the built-in model's LM head under LoRA): grad_hidden [rows, hidden] is
// added to and no weight gradient is computed (one matrix product per tile fewer). `saved` as in backward (lse null:
// the statistics pass runs). grad_logp and grad_entropy are checked finite; the other arguments are the caller's own.
void backward_frozen_weight(const float* hidden, const float* weight, const int32_t* targets, int64_t rows, int64_t hidden_size,
                            int64_t vocab, const grpo_linear_logprob_options& o, const SavedStats& saved,
                            const float* grad_logp, const float* grad_entropy, float* grad_hidden);

// The C ABI entry points for one storage type T of hidden and weight: the shared argument checks, then the driver
// over a HeadT(hidden, weight, shape).
template <typename HeadT, typename T>
grpo_status forward_entry(const T* hidden, const T* weight, const float* bias, const int32_t* targets, int64_t rows,
                          int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options, float* logp,
                          float* entropy, float* lse) {
  return guarded([&] {
    linear_logprob_checks::forward(hidden, weight, bias, targets, rows, hidden_size, vocab, options, logp);
    const Shape s = make_shape(rows, hidden_size, vocab, *options);
    HeadT head(hidden, weight, s);
    forward(head, bias, targets, s, *options, logp, entropy, lse);
  });
}

template <typename HeadT, typename T>
grpo_status backward_entry(const T* hidden, const T* weight, const float* bias, const int32_t* targets, int64_t rows,
                           int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options,
                           const float* grad_logp, const float* grad_entropy, float* grad_hidden, float* grad_weight,
                           float* grad_bias, int accumulate, const SavedStats* saved = nullptr) {
  return guarded([&] {
    linear_logprob_checks::backward(hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp,
                                    grad_entropy, grad_hidden, grad_weight, grad_bias);
    if (saved) linear_logprob_checks::saved_stats(targets, rows, options->ignore_index, saved->lse, saved->entropy, grad_entropy);
    const Shape s = make_shape(rows, hidden_size, vocab, *options);
    HeadT head(hidden, weight, s);
    backward(head, bias, targets, s, *options, {grad_logp, grad_entropy, grad_hidden, grad_weight, grad_bias},
             accumulate != 0, saved ? *saved : SavedStats{nullptr, nullptr});
  });
}

}  // namespace grpo::linear_logprob
