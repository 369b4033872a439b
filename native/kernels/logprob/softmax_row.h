// Row primitives of a softmax over scaled logits z = x · scale, shared by the plain and the
// fused (LM-head) log-prob kernels. With m the row max of z, d = z − m, e = exp(d):
//   sum = Σ e,  dot = Σ e·d,  log_sum = log(sum),  lse = m + log_sum,
//   entropy H = −Σ p log p = log_sum − dot / sum.
// Masked entries (x = −Infinity) have e = 0 and contribute nothing (d is clamped first).
#pragma once

#include <cmath>
#include <cstdint>

namespace grpo {

struct ExpMoments {
  float sum = 0.0f;
  float dot = 0.0f;
};

// Σ e and Σ e·d over x[0, n) for d = x·scale − shift.
ExpMoments exp_moments(const float* x, int64_t n, float scale, float shift);

// Softmax statistics accumulated span by span (an online log-sum-exp): each span's max, then its
// exp moments relative to that max while the span is still in L1, merged with one rescale. A row
// absorbed in L1-sized spans is therefore read from memory once, and the exps overlap the stream.
struct OnlineSoftmax {
  float max = -INFINITY;  // of the scaled logits seen so far
  ExpMoments moments;     // relative to max
  bool finite = true;     // false once a span held NaN or +Infinity

  void absorb(const float* x, int64_t n, float scale);
  float log_sum() const;
  float entropy() const;
};

// The statistics of a whole row.
OnlineSoftmax row_softmax(const float* x, int64_t n, float scale);

// out[j] = scale · (g_logp · (δ(j = target) − p_j) − g_entropy · p_j · (log p_j + H)),
// log p_j = (x_j·scale − max) − log_sum. `out` may alias `x`. target < 0 means no target in this span.
void softmax_row_backward(const float* x, int64_t n, float scale, float max, float log_sum, float entropy, float g_logp,
                          float g_entropy, int64_t target, float* out);

}  // namespace grpo
