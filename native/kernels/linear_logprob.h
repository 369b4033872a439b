// Internal to the fused LM-head log-prob: the tile driver (linear_logprob.cc) over a Head, the matrix
// products for one storage precision of hidden and weight (float32 in linear_logprob.cc, bfloat16 in
// linear_logprob_bf16.cc). The driver owns the online log-sum-exp, the bias and the gradient of each tile.
#pragma once

#include <cstdint>

#include "grpo/logprob.h"

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
  // grad_hidden[r0 ..] += tile · weight[v0 ..];  grad_weight[v0 ..] += tileᵀ · hidden[r0 ..]  (may overwrite tile)
  virtual void multiply_out(int64_t r0, int64_t n, int64_t v0, int64_t cols, float* tile, float* grad_hidden,
                            float* grad_weight) = 0;
};

struct Gradients {
  const float* logp;
  const float* entropy;
  float *hidden, *weight, *bias;
};

void forward(Head& head, const float* bias, const int32_t* targets, const Shape& s, const grpo_linear_logprob_options& o,
             float* logp, float* entropy, float* lse);

void backward(Head& head, const float* bias, const int32_t* targets, const Shape& s, const grpo_linear_logprob_options& o,
              const Gradients& g, bool accumulate);

}  // namespace grpo::linear_logprob
