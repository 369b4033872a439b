#include "softmax_row.h"

#include <cmath>

#include "runtime/simd.h"

namespace grpo {

using simd::exp_nonpositive;
using simd::kExpUnderflow;
using simd::kLanes;

// d clamped so that masked entries (d = −Infinity) give e · d = 0, not NaN.
GRPO_INLINE float clamp_low(float d) { return simd::at_least(d, kExpUnderflow); }

GRPO_CLONES ExpMoments exp_moments(const float* x, int64_t n, float scale, float shift) {
  float sum[kLanes] = {}, dot[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const float d = clamp_low(x[i + l] * scale - shift);
      const float e = exp_nonpositive(d);
      sum[l] += e;
      dot[l] += e * d;
    }
  }
  for (int l = 0; i < n; ++i, ++l) {
    const float d = clamp_low(x[i] * scale - shift);
    const float e = exp_nonpositive(d);
    sum[l] += e;
    dot[l] += e * d;
  }
  ExpMoments moments;
  for (int l = 0; l < kLanes; ++l) moments.sum += sum[l], moments.dot += dot[l];
  return moments;
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
  const ExpMoments span = exp_moments(x, n, scale, span_max);
  const float new_max = max > span_max ? max : span_max;
  const ExpMoments old_part = rebase(moments, max, new_max), new_part = rebase(span, span_max, new_max);
  moments = {old_part.sum + new_part.sum, old_part.dot + new_part.dot};
  max = new_max;
}

float OnlineSoftmax::log_sum() const { return std::log(moments.sum); }

float OnlineSoftmax::entropy() const { return log_sum() - moments.dot / moments.sum; }

OnlineSoftmax row_softmax(const float* x, int64_t n, float scale) {
  OnlineSoftmax state;
  for (int64_t begin = 0; begin < n; begin += kSpan) state.absorb(x + begin, n - begin < kSpan ? n - begin : kSpan, scale);
  return state;
}

GRPO_CLONES void softmax_row_backward(const float* x, int64_t n, float scale, float max, float log_sum, float entropy, float g_logp,
                                      float g_entropy, int64_t target, float* out) {
  for (int64_t j = 0; j < n; ++j) {
    const float log_p = clamp_low((x[j] * scale - max) - log_sum);
    const float p = exp_nonpositive(log_p);
    out[j] = scale * (-g_logp * p - g_entropy * p * (log_p + entropy));
  }
  if (target >= 0) out[target] += scale * g_logp;
}

}  // namespace grpo
