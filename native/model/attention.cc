#include "attention.h"

#include <algorithm>
#include <cmath>

#include "gemm/gemm.h"
#include "runtime/simd.h"
#include "runtime/thread_pool.h"
#include "vec.h"

namespace grpo::model {

namespace {

struct Dims {
  int64_t q_ld, kv_ld, group, keys;
  float scale;
};

Dims dims(const AttnShape& s, const Segment& seg) {
  return {s.heads * s.head_dim, s.kv_heads * s.head_dim, s.heads / s.kv_heads, seg.p0 + seg.len,
          1.0f / std::sqrt(static_cast<float>(s.head_dim))};
}

// scores [len, keys] = scale · Q_h · K_gᵀ, future keys set to -inf
void scores(const AttnShape& s, const Dims& d, const float* q, const Segment& seg, int64_t h, float* S) {
  const int64_t g = h / d.group;
  gemm(false, true, seg.len, d.keys, s.head_dim, d.scale, q + seg.t0 * d.q_ld + h * s.head_dim, d.q_ld,
       seg.k + g * s.head_dim, d.kv_ld, 0.0f, S, d.keys);
  for (int64_t i = 0; i < seg.len; ++i)
    for (int64_t j = seg.p0 + i + 1; j < d.keys; ++j) S[i * d.keys + j] = -INFINITY;
}

// Softmax of one row in place (lane-split max and sum); returns its log-sum-exp.
GRPO_CLONES float softmax_row(float* row, int64_t cols) {
  const float max = simd::max_of(row, cols);  // the lane-split max (the same comparisons as std::max per lane)
  float sum[vec::kLanes] = {};
  int64_t j = 0;
  for (; j + vec::kLanes <= cols; j += vec::kLanes)
    for (int l = 0; l < vec::kLanes; ++l) sum[l] += (row[j + l] = simd::exp_nonpositive(row[j + l] - max));
  for (int l = 0; j + l < cols; ++l) sum[l] += (row[j + l] = simd::exp_nonpositive(row[j + l] - max));
  const float total = vec::combine(sum), inv = 1.0f / total;
  for (int64_t k = 0; k < cols; ++k) row[k] *= inv;
  return max + std::log(total);
}

// Softmax of each row in place; returns its log-sum-exp in lse_row[i · stride].
void softmax_rows(float* S, int64_t rows, int64_t cols, float* lse, int64_t stride) {
  for (int64_t i = 0; i < rows; ++i) {
    const float row_lse = softmax_row(S + i * cols, cols);
    if (lse) lse[i * stride] = row_lse;
  }
}

// A single query row (a decoding step), every head at once: the keys and values of one sequence are rows
// of kv_heads·head_dim floats, contiguous in the cache, so each group of 4 rows is streamed once for all heads
// (a task per kv head would read each row in head_dim-wide strides). Per head the sums are those of dot4 and
// axpy4 over the same groups of 4 keys, so the bits do not depend on this loop order. S [heads, keys].
GRPO_CLONES void forward_row(const AttnShape& s, const Dims& d, const float* q, const Segment& seg, float* S, float* out,
                             float* lse) {
  const int64_t hd = s.head_dim, keys = d.keys, tail = keys - keys % 4;
  const float* qt = q + seg.t0 * d.q_ld;
  const auto k_row = [&](int64_t j, int64_t h) { return seg.k + j * d.kv_ld + (h / d.group) * hd; };
  const auto v_row = [&](int64_t j, int64_t h) { return seg.v + j * d.kv_ld + (h / d.group) * hd; };
  const int64_t group_floats = 4 * d.kv_ld;  // a group of 4 key (value) rows, contiguous
  for (int64_t j = 0; j < tail; j += 4) {
    simd::prefetch(k_row(j, 0) + simd::kPrefetchAhead, group_floats);
    for (int64_t h = 0; h < s.heads; ++h) vec::dot4(qt + h * hd, k_row(j, h), d.kv_ld, hd, S + h * keys + j);
  }
  simd::prefetch(v_row(0, 0), std::min(keys * d.kv_ld, simd::kPrefetchAhead));
  for (int64_t h = 0; h < s.heads; ++h) {
    float* Sh = S + h * keys;
    for (int64_t j = tail; j < keys; ++j) Sh[j] = vec::dot(qt + h * hd, k_row(j, h), hd);
    for (int64_t j = 0; j < keys; ++j) Sh[j] *= d.scale;
    softmax_rows(Sh, 1, keys, lse ? lse + seg.t0 * s.heads + h : nullptr, s.heads);
  }
  float* o = out + seg.t0 * d.q_ld;
  std::fill(o, o + d.q_ld, 0.0f);
  for (int64_t j = 0; j < tail; j += 4) {
    simd::prefetch(v_row(j, 0) + simd::kPrefetchAhead, group_floats);
    for (int64_t h = 0; h < s.heads; ++h) vec::axpy4(S + h * keys + j, v_row(j, h), d.kv_ld, hd, o + h * hd);
  }
  for (int64_t j = tail; j < keys; ++j)
    for (int64_t h = 0; h < s.heads; ++h) vec::axpy(S[h * keys + j], v_row(j, h), hd, o + h * hd);
}

void forward_head(const AttnShape& s, const float* q, const Segment& seg, int64_t h, float* S, float* out, float* lse) {
  const Dims d = dims(s, seg);
  scores(s, d, q, seg, h, S);
  softmax_rows(S, seg.len, d.keys, lse ? lse + seg.t0 * s.heads + h : nullptr, s.heads);
  gemm(false, false, seg.len, s.head_dim, d.keys, 1.0f, S, d.keys, seg.v + (h / d.group) * s.head_dim, d.kv_ld, 0.0f,
       out + seg.t0 * d.q_ld + h * s.head_dim, d.q_ld);
}

// P [len, keys] = exp(S − lse) in place: the softmax of forward from its log-sum-exp (lse_row[i · stride]).
GRPO_CLONES GRPO_NO_CONTRACTION void probabilities(float* P, int64_t len, int64_t keys, const float* lse_row,
                                                   int64_t stride) {
  for (int64_t i = 0; i < len; ++i) {
    const float l = lse_row[i * stride];
    for (int64_t j = 0; j < keys; ++j) {
      const float x = P[i * keys + j] - l;
      P[i * keys + j] = simd::exp_nonpositive(simd::keep_if(!(x > 0.0f), x));  // min(x, 0) without a branch
    }
  }
}

// dS [len, keys] = P ⊙ (dP − rowsum(dO ⊙ O)) with dP in dS on entry; dout, out rows of head_dim at stride ld.
GRPO_CLONES GRPO_NO_CONTRACTION void score_grads(const float* P, const float* dout, const float* out, int64_t len,
                                                 int64_t keys, int64_t head_dim, int64_t ld, float* dS) {
  for (int64_t i = 0; i < len; ++i) {
    float dot = 0.0f;
    for (int64_t e = 0; e < head_dim; ++e) dot += dout[i * ld + e] * out[i * ld + e];
    for (int64_t j = 0; j < keys; ++j) dS[i * keys + j] = P[i * keys + j] * (dS[i * keys + j] - dot);
  }
}

// P = softmax recomputed from lse; dS = P ⊙ (dP − rowsum(dO ⊙ O)); then dQ, dK, dV.
void backward_head(const AttnShape& s, const float* q, const Segment& seg, int64_t h, const float* out, const float* lse,
                   const float* dout, float* P, float* dS, float* dq) {
  const Dims d = dims(s, seg);
  const int64_t g = h / d.group, qo = seg.t0 * d.q_ld + h * s.head_dim;
  scores(s, d, q, seg, h, P);
  probabilities(P, seg.len, d.keys, lse + seg.t0 * s.heads + h, s.heads);
  gemm(false, true, seg.len, d.keys, s.head_dim, 1.0f, dout + qo, d.q_ld, seg.v + g * s.head_dim, d.kv_ld, 0.0f, dS, d.keys);
  score_grads(P, dout + qo, out + qo, seg.len, d.keys, s.head_dim, d.q_ld, dS);
  gemm(false, false, seg.len, s.head_dim, d.keys, d.scale, dS, d.keys, seg.k + g * s.head_dim, d.kv_ld, 0.0f, dq + qo, d.q_ld);
  gemm(true, false, d.keys, s.head_dim, seg.len, d.scale, dS, d.keys, q + qo, d.q_ld, 1.0f, seg.dk + g * s.head_dim, d.kv_ld);
  gemm(true, false, d.keys, s.head_dim, seg.len, 1.0f, P, d.keys, dout + qo, d.q_ld, 1.0f, seg.dv + g * s.head_dim, d.kv_ld);
}

}  // namespace

// One task per (segment, kv head); a single query row is one task for all its heads (the first of its
// segment's tasks). Tasks write disjoint rows of out, so they never collide.
void attention_forward(const AttnShape& s, const float* q, const std::vector<Segment>& segments, float* out, float* lse) {
  const int64_t group = s.heads / s.kv_heads;
  parallel_for(static_cast<int64_t>(segments.size()) * s.kv_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> S;
    for (int64_t task = begin; task < end; ++task) {
      const Segment& seg = segments[task / s.kv_heads];
      const int64_t kv_head = task % s.kv_heads;
      if (seg.len == 1) {
        if (kv_head > 0) continue;
        S.resize(static_cast<size_t>(s.heads * (seg.p0 + 1)));
        forward_row(s, dims(s, seg), q, seg, S.data(), out, lse);
        continue;
      }
      S.resize(static_cast<size_t>(seg.len * (seg.p0 + seg.len)));
      for (int64_t h = kv_head * group, e = h + group; h < e; ++h) forward_head(s, q, seg, h, S.data(), out, lse);
    }
  });
}

void attention_backward(const AttnShape& s, const float* q, const std::vector<Segment>& segments, const float* out,
                        const float* lse, const float* dout, float* dq) {
  const int64_t group = s.heads / s.kv_heads;
  parallel_for(static_cast<int64_t>(segments.size()) * s.kv_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> P, dS;
    for (int64_t task = begin; task < end; ++task) {
      const Segment& seg = segments[task / s.kv_heads];
      P.resize(static_cast<size_t>(seg.len * (seg.p0 + seg.len)));
      dS.resize(P.size());
      for (int64_t h = (task % s.kv_heads) * group, e = h + group; h < e; ++h)
        backward_head(s, q, seg, h, out, lse, dout, P.data(), dS.data(), dq);
    }
  });
}

}  // namespace grpo::model
