#include "softmax_row.h"

#include <cmath>

#include "simd.h"

namespace grpo {

using simd::exp_nonpositive;
using simd::kExpUnderflow;
using simd::kLanes;

GRPO_INLINE float clamp_low(float d) { return d < kExpUnderflow ? kExpUnderflow : d; }

GRPO_CLONES ExpMoments exp_moments(const float* x, int64_t n, float scale, float shift, const float* prefetch) {
  float sum[kLanes] = {}, dot[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    if (prefetch) __builtin_prefetch(prefetch + i, 0, 3);
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

ExpMoments rebase(ExpMoments moments, float from, float to) {
  if (moments.sum == 0.0f) return {};
  const float delta = from - to;  // <= 0
  const float factor = std::exp(delta);
  return {moments.sum * factor, (moments.dot + moments.sum * delta) * factor};
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
