// Row primitives of a softmax over scaled logits z = x · scale, shared by the plain and the
// fused (LM-head) log-prob kernels. With m the row max of z, d = z − m, e = exp(d):
//   sum = Σ e,  dot = Σ e·d,  log_sum = log(sum),  lse = m + log_sum,
//   entropy H = −Σ p log p = log_sum − dot / sum.
// Masked entries (x = −Infinity) have e = 0 and contribute nothing (d is clamped first).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace grpo {

struct ExpMoments {
  float sum = 0.0f;
  float dot = 0.0f;
};

// Σ e and Σ e·d over x[0, n) for d = x·scale − shift.
ExpMoments exp_moments(const float* x, int64_t n, float scale, float shift);

// exp_moments of x[0, n), and in the same sweep simd::max_checked of next[0, next_n) into *next_max and
// *next_bad: the next span's loads overlap this span's exps.
ExpMoments exp_moments_next_max(const float* x, int64_t n, float scale, float shift, const float* next, int64_t next_n,
                                float* next_max, bool* next_bad);

// Σ e over x[0, n) for d = x·scale − shift, without Σ e·d (the forward when no entropy is asked for), and in
// the same sweep the max of next[0, next_n) ignoring NaN (simd::max_of) into *next_max: the next span's loads
// overlap this span's exps.
float exp_sum_next_max(const float* x, int64_t n, float scale, float shift, const float* next, int64_t next_n,
                       float* next_max);

// out[0, n) = e for d = x·scale − shift (exp_sum_next_max's e, out may be x).
void exp_span(const float* x, int64_t n, float scale, float shift, float* out);

// out[0, n) *= factor.
void scale_span(float* out, int64_t n, float factor);

// Softmax statistics accumulated span by span (an online log-sum-exp): each span's max, then its
// exp moments relative to that max while the span is still in L1, merged with one rescale. A row
// absorbed in L1-sized spans is therefore read from memory once, and the exps overlap the stream.
struct OnlineSoftmax {
  float max = -INFINITY;  // of the scaled logits seen so far
  ExpMoments moments;     // relative to max
  bool finite = true;     // false once a span held NaN or +Infinity

  void absorb(const float* x, int64_t n, float scale);
  // The merge of one span's moments taken relative to span_max (absorb's second half).
  void merge(float span_max, ExpMoments span);
  // Without Σ e·d (moments.dot stays 0: entropy() is not defined): true for a span whose scaled max is
  // −Infinity (nothing to add; marks the row bad when the span holds NaN), and the merge of a span's Σ e
  // taken relative to span_max (NaN when the span held NaN or +Infinity: the row is marked bad).
  bool skip_masked(const float* x, int64_t n, float span_max);
  void merge_sum(float span_max, float sum);
  float log_sum() const;
  float entropy() const;
};

// The statistics of a whole row.
OnlineSoftmax row_softmax(const float* x, int64_t n, float scale);

// The statistics of a whole row without Σ e·d (no entropy). Each span's max ignores NaN (one vector operation
// per logit); Σ e comes out NaN when the row holds NaN or +Infinity. span_max (NULL: none) receives each span's
// scaled max.
OnlineSoftmax row_log_sum_exp(const float* x, int64_t n, float scale, std::vector<float>* span_max = nullptr);

// The backward of logp alone (no entropy gradient): the row's statistics in one sweep (the forward's), then
// span by span, while x's span is still in L2, its e again (the same bits) scaled by the span's share of the
// row's softmax into out: out[j] = scale · g_logp · (δ(j = target) − p_j). stream: out is written with
// non-temporal stores (for gradients larger than the caches), else through the cache. `out` may alias `x`.
// Returns the row's statistics, for the caller's checks (out holds no gradient when !finite or max = −Infinity).
OnlineSoftmax softmax_row_logp_backward(const float* x, int64_t n, float scale, float g_logp, int64_t target, bool stream,
                                        float* out);

// out[j] = scale · (g_logp · (δ(j = target) − p_j) − g_entropy · p_j · (log p_j + H)),
// log p_j = (x_j·scale − max) − log_sum. `out` may alias `x`. target < 0 means no target in this span.
void softmax_row_backward(const float* x, int64_t n, float scale, float max, float log_sum, float entropy, float g_logp,
                          float g_entropy, int64_t target, float* out);

// The backward from the forward's lse = max + log_sum (and entropy H): softmax_row_backward with
// log p_j = x_j·scale − lse, in one sweep of the row, span by span; stream: out written with non-temporal stores.
// Returns false when the row holds NaN or +Infinity. `out` may alias `x`.
bool softmax_row_saved_backward(const float* x, int64_t n, float scale, float lse, float entropy, float g_logp,
                                float g_entropy, int64_t target, bool stream, float* out);

}  // namespace grpo
