#include "softmax_row.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/simd.h"
#include "runtime/stream_store.h"

namespace grpo {

using simd::exp_masked;
using simd::kExpUnderflow;
using simd::kLanes;

// d clamped so that masked entries (d = −Infinity) give e · d = 0, not NaN.
GRPO_INLINE float clamp_low(float d) { return simd::at_least(d, kExpUnderflow); }

constexpr int64_t kPrefetchBlock = 256;  // floats: 16 cache lines requested per block of exps

// The exp loops ask for the next span (x + n: the rest of the row, then the next row) block by block while
// they compute, so that its max pass reads from cache instead of waiting on memory (the max pass took twice the
// time of the exps on one thread, docs/performance.md).
using simd::prefetch;

GRPO_CLONES ExpMoments exp_moments(const float* x, int64_t n, float scale, float shift) {
  float sum[kLanes] = {}, dot[kLanes] = {};
  int64_t i = 0;
  while (i + kLanes <= n) {
    prefetch(x + n + i, kPrefetchBlock);
    for (const int64_t end = std::min(i + kPrefetchBlock, n); i + kLanes <= end; i += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const float d = clamp_low(x[i + l] * scale - shift);
        const float e = exp_masked(d);
        sum[l] += e;
        dot[l] += e * d;
      }
  }
  for (int l = 0; i < n; ++i, ++l) {
    const float d = clamp_low(x[i] * scale - shift);
    const float e = exp_masked(d);
    sum[l] += e;
    dot[l] += e * d;
  }
  ExpMoments moments;
  for (int l = 0; l < kLanes; ++l) moments.sum += sum[l], moments.dot += dot[l];
  return moments;
}

GRPO_CLONES ExpMoments exp_moments_next_max(const float* x, int64_t n, float scale, float shift, const float* next,
                                            int64_t next_n, float* next_max, bool* next_bad) {
  constexpr float kInf = INFINITY;
  float sum[kLanes] = {}, dot[kLanes] = {}, top[kLanes];
  int bad[kLanes] = {};
  for (int l = 0; l < kLanes; ++l) top[l] = -kInf;
  const int64_t both = std::min(n, next_n) / kLanes * kLanes;
  int64_t i = 0;
  for (; i < both; i += kLanes) {
    __builtin_prefetch(next + i + simd::kPrefetchAhead);
    for (int l = 0; l < kLanes; ++l) {
      const float d = clamp_low(x[i + l] * scale - shift);
      const float e = exp_masked(d);
      sum[l] += e;
      dot[l] += e * d;
      const float v = next[i + l];  // as simd::max_checked
      bad[l] |= !(v < kInf);
      top[l] = v > top[l] ? v : top[l];
    }
  }
  ExpMoments rest = exp_moments(x + i, n - i, scale, shift);
  bool rest_bad = false;
  float result = simd::max_checked(next + both, next_n - both, &rest_bad);
  int any_bad = rest_bad;
  for (int l = 0; l < kLanes; ++l) {
    result = top[l] > result ? top[l] : result;
    any_bad |= bad[l];
    rest.sum += sum[l], rest.dot += dot[l];
  }
  *next_max = result;
  *next_bad = any_bad != 0;
  return rest;
}

// d needs no clamp here: without Σ e·d, a masked entry (d = −Infinity) is dropped by exp_masked's mask.
GRPO_CLONES float exp_sum_next_max(const float* x, int64_t n, float scale, float shift, const float* next, int64_t next_n,
                                   float* next_max) {
  float sum[kLanes] = {}, top[kLanes];
  for (int l = 0; l < kLanes; ++l) top[l] = -INFINITY;
  const int64_t both = std::min(n, next_n) / kLanes * kLanes;
  int64_t i = 0;
  for (; i < both; i += kLanes) {
    __builtin_prefetch(next + i + simd::kPrefetchAhead);
    for (int l = 0; l < kLanes; ++l) {
      sum[l] += exp_masked(x[i + l] * scale - shift);
      top[l] = next[i + l] > top[l] ? next[i + l] : top[l];  // as simd::max_of: NaN ignored
    }
  }
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) sum[l] += exp_masked(x[i + l] * scale - shift);
  for (int l = 0; i < n; ++i, ++l) sum[l] += exp_masked(x[i] * scale - shift);
  float result = simd::max_of(next + both, next_n - both), total = 0.0f;
  for (int l = 0; l < kLanes; ++l) {
    result = top[l] > result ? top[l] : result;
    total += sum[l];
  }
  *next_max = result;
  return total;
}

GRPO_CLONES void exp_span(const float* x, int64_t n, float scale, float shift, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_masked(x[i] * scale - shift);
}

GRPO_CLONES void scale_span(float* out, int64_t n, float factor) {
  for (int64_t i = 0; i < n; ++i) out[i] *= factor;
}

namespace {

constexpr int64_t kSpan = 2048;  // 8 KB of floats: the span stays in L1 between its two reads

// Moments taken relative to shift `from`, re-expressed relative to `to` (to >= from).
ExpMoments rebase(ExpMoments moments, float from, float to) {
  if (moments.sum == 0.0f) return {};
  const float delta = from - to;  // <= 0
  const float factor = std::exp(delta);
  return {moments.sum * factor, (moments.dot + moments.sum * delta) * factor};
}

}  // namespace

void OnlineSoftmax::absorb(const float* x, int64_t n, float scale) {
  bool bad = false;
  const float span_max = simd::max_checked(x, n, &bad) * scale;
  finite = finite && !bad;
  if (bad || span_max == -INFINITY) return;
  merge(span_max, exp_moments(x, n, scale, span_max));
}

void OnlineSoftmax::merge(float span_max, ExpMoments span) {
  const float new_max = max > span_max ? max : span_max;
  const ExpMoments old_part = rebase(moments, max, new_max), new_part = rebase(span, span_max, new_max);
  moments = {old_part.sum + new_part.sum, old_part.dot + new_part.dot};
  max = new_max;
}

bool OnlineSoftmax::skip_masked(const float* x, int64_t n, float span_max) {
  if (span_max != -INFINITY) return false;
  bool bad = false;  // masked out, or NaN among −Infinity (max_of ignores NaN)
  simd::max_checked(x, n, &bad);
  finite = finite && !bad;
  return true;
}

void OnlineSoftmax::merge_sum(float span_max, float sum) {
  if (std::isnan(sum)) finite = false;  // the span held NaN or +Infinity
  if (!finite) return;
  const float new_max = max > span_max ? max : span_max;
  moments.sum = rebase({moments.sum, 0.0f}, max, new_max).sum + rebase({sum, 0.0f}, span_max, new_max).sum;
  max = new_max;
}

float OnlineSoftmax::log_sum() const { return std::log(moments.sum); }

float OnlineSoftmax::entropy() const { return log_sum() - moments.dot / moments.sum; }

// As absorb span by span, each span's exps in the sweep that takes the next span's checked max.
OnlineSoftmax row_softmax(const float* x, int64_t n, float scale) {
  OnlineSoftmax state;
  bool bad = false;
  float raw_max = simd::max_checked(x, std::min(n, kSpan), &bad);
  for (int64_t begin = 0; begin < n; begin += kSpan) {
    const int64_t length = std::min(n - begin, kSpan), next_length = std::clamp<int64_t>(n - begin - kSpan, 0, kSpan);
    const float *span = x + begin, *next = span + length;
    const float span_max = raw_max * scale;
    state.finite = state.finite && !bad;
    if (bad || span_max == -INFINITY) {
      raw_max = simd::max_checked(next, next_length, &bad);
      continue;
    }
    state.merge(span_max, exp_moments_next_max(span, length, scale, span_max, next, next_length, &raw_max, &bad));
  }
  return state;
}

// Each span's exps run in the sweep that takes the next span's max: the loads from memory overlap the exps.
OnlineSoftmax row_log_sum_exp(const float* x, int64_t n, float scale, std::vector<float>* span_max) {
  OnlineSoftmax state;
  float raw_max = simd::max_of(x, std::min(n, kSpan));
  for (int64_t begin = 0; begin < n; begin += kSpan) {
    const int64_t length = std::min(n - begin, kSpan), next_length = std::clamp<int64_t>(n - begin - kSpan, 0, kSpan);
    const float* span = x + begin;
    const float max = raw_max * scale;
    if (span_max) span_max->push_back(max);
    if (state.skip_masked(span, length, max)) {
      raw_max = simd::max_of(span + length, next_length);
      continue;
    }
    state.merge_sum(max, exp_sum_next_max(span, length, scale, max, span + length, next_length, &raw_max));
  }
  return state;
}

namespace {

// out[0, n) = factor · e for d = x·scale − shift, the e first in `exps` [n] (in L1) when streaming, else in out.
void scaled_exps(const float* x, int64_t n, float scale, float shift, float factor, bool stream, float* exps, float* out) {
  exp_span(x, n, scale, shift, stream ? exps : out);
  if (stream) simd::stream_scaled(out, exps, n, factor);
  else scale_span(out, n, factor);
}

}  // namespace

OnlineSoftmax softmax_row_logp_backward(const float* x, int64_t n, float scale, float g_logp, int64_t target, bool stream,
                                        float* out) {
  std::vector<float> span_max;  // [spans]
  span_max.reserve(static_cast<size_t>((n + kSpan - 1) / kSpan));
  const OnlineSoftmax state = row_log_sum_exp(x, n, scale, &span_max);
  if (!state.finite || state.max == -INFINITY) return state;
  const float g = -scale * g_logp / state.moments.sum;  // −scale · g_logp · p_j = g · e_j · e^(span max − max)
  alignas(64) float exps[kSpan];
  for (int64_t s = 0, begin = 0; begin < n; ++s, begin += kSpan) {
    const int64_t length = n - begin < kSpan ? n - begin : kSpan;
    if (span_max[s] == -INFINITY) std::fill(out + begin, out + begin + length, 0.0f);
    else scaled_exps(x + begin, length, scale, span_max[s], g * std::exp(span_max[s] - state.max), stream, exps, out + begin);
  }
  if (stream) simd::stream_fence();  // before the target's read-modify-write below
  if (target >= 0) out[target] += scale * g_logp;
  return state;
}

GRPO_CLONES void softmax_row_backward(const float* x, int64_t n, float scale, float max, float log_sum, float entropy, float g_logp,
                                      float g_entropy, int64_t target, float* out) {
  for (int64_t j = 0; j < n; ++j) {
    const float log_p = clamp_low((x[j] * scale - max) - log_sum);
    const float p = exp_masked(log_p);
    out[j] = scale * (-g_logp * p - g_entropy * p * (log_p + entropy));
  }
  if (target >= 0) out[target] += scale * g_logp;
}

bool softmax_row_saved_backward(const float* x, int64_t n, float scale, float lse, float entropy, float g_logp,
                                float g_entropy, int64_t target, bool stream, float* out) {
  alignas(64) float span[kSpan];  // a streamed span, in L1
  bool bad = false;
  const auto check = [&](int64_t begin, int64_t length) {
    bool span_bad = false;
    simd::max_checked(x + begin, length, &span_bad);
    bad |= span_bad;
  };
  for (int64_t begin = 0; begin < n; begin += kSpan) {
    const int64_t length = n - begin < kSpan ? n - begin : kSpan;
    if (out == x) check(begin, length);  // in place: before the span is overwritten
    if (g_entropy == 0.0f) {             // p_j = e^(x_j·scale − lse): −scale · g_logp · p_j
      scaled_exps(x + begin, length, scale, lse, -scale * g_logp, stream, span, out + begin);
    } else {
      softmax_row_backward(x + begin, length, scale, lse, 0.0f, entropy, g_logp, g_entropy, -1, stream ? span : out + begin);
      if (stream) simd::stream_scaled(out + begin, span, length, 1.0f);  // x · 1 is x
    }
    if (out != x) check(begin, length);  // the span is in L1 now
  }
  if (stream) simd::stream_fence();  // before the target's read-modify-write below
  if (target >= 0) out[target] += scale * g_logp;
  return !bad;
}

}  // namespace grpo
