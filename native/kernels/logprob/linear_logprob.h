// Internal to the fused LM-head log-prob: the tile driver (linear_logprob.cc) over a Head, the matrix
// products for one storage precision of hidden and weight (float32 in linear_logprob.cc, bfloat16 in
// linear_logprob_bf16.cc). The driver owns the online log-sum-exp, the bias and the gradient of each tile.
#pragma once

#include <cstdint>
#include <optional>

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

// The forward's outputs, reused by the backward in place of its statistics pass (lse null: none saved) and, with
// logits, of its recompute of each tile.
struct SavedStats {
  const float* lse;      // [rows] log-sum-exp of logits / temperature
  const float* entropy;  // [rows], or null when no grad_entropy is given
  const float* logits = nullptr;  // [rows, vocab] hidden · weightᵀ + bias as the forward computed them, or null
};

// kept_logits [rows, vocab] (null: not kept) receives every tile of logits as computed (bias added, unscaled).
void forward(Head& head, const float* bias, const int32_t* targets, const Shape& s, const grpo_linear_logprob_options& o,
             float* logp, float* entropy, float* lse, float* kept_logits);

void backward(Head& head, const float* bias, const int32_t* targets, const Shape& s, const grpo_linear_logprob_options& o,
              const Gradients& g, bool accumulate, const SavedStats& saved);

// The float32 backward with a frozen weight (the built-in model's LM head under LoRA): grad_hidden [rows, hidden] is
// added to and no weight gradient is computed (one matrix product per tile fewer). `saved` as in backward (lse null:
// the statistics pass runs). grad_logp and grad_entropy are checked finite; the other arguments are the caller's own.
void backward_frozen_weight(const float* hidden, const float* weight, const int32_t* targets, int64_t rows, int64_t hidden_size,
                            int64_t vocab, const grpo_linear_logprob_options& o, const SavedStats& saved,
                            const float* grad_logp, const float* grad_entropy, float* grad_hidden);

// The C ABI entry points for one storage type T of hidden and weight: the shared argument checks, then the driver
// over a HeadT(hidden, weight, shape). kept_logits: only from the _logits entry points, where it must not be null.
template <typename HeadT, typename T>
grpo_status forward_entry(const T* hidden, const T* weight, const float* bias, const int32_t* targets, int64_t rows,
                          int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options, float* logp,
                          float* entropy, float* lse, std::optional<float*> kept_logits = std::nullopt) {
  return guarded([&] {
    linear_logprob_checks::forward(hidden, weight, bias, targets, rows, hidden_size, vocab, options, logp);
    if (kept_logits) linear_logprob_checks::kept_logits(*kept_logits, rows);
    const Shape s = make_shape(rows, hidden_size, vocab, *options);
    HeadT head(hidden, weight, s);
    forward(head, bias, targets, s, *options, logp, entropy, lse, kept_logits.value_or(nullptr));
  });
}

template <typename HeadT, typename T>
grpo_status backward_entry(const T* hidden, const T* weight, const float* bias, const int32_t* targets, int64_t rows,
                           int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options,
                           const float* grad_logp, const float* grad_entropy, float* grad_hidden, float* grad_weight,
                           float* grad_bias, int accumulate, const SavedStats* saved = nullptr,
                           std::optional<const float*> kept_logits = std::nullopt) {
  return guarded([&] {
    linear_logprob_checks::backward(hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp,
                                    grad_entropy, grad_hidden, grad_weight, grad_bias);
    if (saved) linear_logprob_checks::saved_stats(targets, rows, options->ignore_index, saved->lse, saved->entropy, grad_entropy);
    if (kept_logits) linear_logprob_checks::kept_logits(*kept_logits, rows);
    const Shape s = make_shape(rows, hidden_size, vocab, *options);
    HeadT head(hidden, weight, s);
    SavedStats reused = saved ? *saved : SavedStats{nullptr, nullptr};
    reused.logits = kept_logits.value_or(nullptr);
    backward(head, bias, targets, s, *options, {grad_logp, grad_entropy, grad_hidden, grad_weight, grad_bias},
             accumulate != 0, reused);
  });
}

}  // namespace grpo::linear_logprob
