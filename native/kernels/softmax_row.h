// Row primitives of a softmax over scaled logits z = x · scale, shared by the plain and the
// fused (LM-head) log-prob kernels. With m the row max of z, d = z − m, e = exp(d):
//   sum = Σ e,  dot = Σ e·d,  log_sum = log(sum),  lse = m + log_sum,
//   entropy H = −Σ p log p = log_sum − dot / sum.
// Masked entries (x = −Infinity) have e = 0 and contribute nothing (d is clamped first).
#pragma once

#include <cstdint>

namespace grpo {

struct ExpMoments {
  float sum = 0.0f;
  float dot = 0.0f;
};

// Σ e and Σ e·d over x[0, n) for d = x·scale − shift. `prefetch` (nullable, n floats) is
// touched one cache line per 16 floats so the next row streams in while this one computes.
ExpMoments exp_moments(const float* x, int64_t n, float scale, float shift, const float* prefetch);

// Merges moments taken relative to shift `from` into ones relative to `to` (to >= from).
ExpMoments rebase(ExpMoments moments, float from, float to);

// out[j] = scale · (g_logp · (δ(j = target) − p_j) − g_entropy · p_j · (log p_j + H)),
// log p_j = (x_j·scale − max) − log_sum. `out` may alias `x`. target < 0 means no target in this span.
void softmax_row_backward(const float* x, int64_t n, float scale, float max, float log_sum, float entropy, float g_logp,
                          float g_entropy, int64_t target, float* out);

}  // namespace grpo
