#include "adamw.h"

#include <algorithm>
#include <cmath>

#include "error.h"
#include "thread_pool.h"

namespace grpo::model {

namespace {

constexpr int64_t kGrain = 65536;

// Sum of squares per fixed block, combined in block order (same bits for any thread count).
double squared_norm(const std::vector<float>& g) {
  const int64_t n = static_cast<int64_t>(g.size());
  std::vector<double> partial(static_cast<size_t>(block_count(n, kGrain)));
  parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
    double s = 0.0;
    for (int64_t i = begin; i < end; ++i) s += static_cast<double>(g[i]) * g[i];
    partial[begin / kGrain] = s;
  });
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}

void check_options(const grpo_adamw_options& o) {
  if (!(o.lr >= 0.0f) || !std::isfinite(o.lr)) fail(GRPO_ERR_VALUE_RANGE, "lr must be finite and >= 0 (got %g)", o.lr);
  if (!(o.beta1 >= 0.0f && o.beta1 < 1.0f)) fail(GRPO_ERR_VALUE_RANGE, "beta1 must be in [0, 1) (got %g)", o.beta1);
  if (!(o.beta2 >= 0.0f && o.beta2 < 1.0f)) fail(GRPO_ERR_VALUE_RANGE, "beta2 must be in [0, 1) (got %g)", o.beta2);
  if (!(o.eps > 0.0f)) fail(GRPO_ERR_VALUE_RANGE, "eps must be > 0 (got %g)", o.eps);
  if (!(o.weight_decay >= 0.0f)) fail(GRPO_ERR_VALUE_RANGE, "weight_decay must be >= 0 (got %g)", o.weight_decay);
}

}  // namespace

float adamw_step(Model& m, const grpo_adamw_options& o) {
  check_options(o);
  m.ensure_grads();
  if (m.adam_m.empty()) {
    m.adam_m.assign(m.params.size(), 0.0f);
    m.adam_v.assign(m.params.size(), 0.0f);
  }
  const double norm = std::sqrt(squared_norm(m.grads));
  if (!std::isfinite(norm)) fail(GRPO_ERR_NON_FINITE, "gradient norm is not finite; parameters left unchanged");
  const float clip = o.max_grad_norm > 0.0f && norm > o.max_grad_norm ? static_cast<float>(o.max_grad_norm / (norm + 1e-6)) : 1.0f;
  ++m.step;
  const float c1 = 1.0f / (1.0f - std::pow(o.beta1, static_cast<float>(m.step)));
  const float c2 = 1.0f / (1.0f - std::pow(o.beta2, static_cast<float>(m.step)));
  for (const TensorSlot& slot : m.layout.slots) {
    const float decay = slot.matrix ? o.lr * o.weight_decay : 0.0f;
    float *p = m.params.data() + slot.offset, *g = m.grads.data() + slot.offset;
    float *mm = m.adam_m.data() + slot.offset, *vv = m.adam_v.data() + slot.offset;
    parallel_for(slot.size(), kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const float grad = g[i] * clip;
        mm[i] = o.beta1 * mm[i] + (1.0f - o.beta1) * grad;
        vv[i] = o.beta2 * vv[i] + (1.0f - o.beta2) * grad * grad;
        p[i] -= decay * p[i] + o.lr * (mm[i] * c1) / (std::sqrt(vv[i] * c2) + o.eps);
        g[i] = 0.0f;
      }
    });
  }
  return static_cast<float>(norm);
}

}  // namespace grpo::model
