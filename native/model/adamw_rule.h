// AdamW's option checks, per-step scalars and per-element update: one copy for the CPU model (adamw.cc)
// and the CUDA model (native/cuda/model/adamw.cu). Under nvcc the update is also a device function.
#pragma once

#include <cmath>
#include <cstdint>

#include "grpo/model.h"
#include "runtime/error.h"

#ifdef __CUDACC__
#define GRPO_ADAMW_HD __host__ __device__ inline
#else
#define GRPO_ADAMW_HD inline
#endif

namespace grpo::model {

inline void check_adamw_options(const grpo_adamw_options& o) {
  if (!(o.lr >= 0.0f) || !std::isfinite(o.lr)) fail(GRPO_ERR_VALUE_RANGE, "lr must be finite and >= 0 (got %g)", o.lr);
  if (!(o.beta1 >= 0.0f && o.beta1 < 1.0f)) fail(GRPO_ERR_VALUE_RANGE, "beta1 must be in [0, 1) (got %g)", o.beta1);
  if (!(o.beta2 >= 0.0f && o.beta2 < 1.0f)) fail(GRPO_ERR_VALUE_RANGE, "beta2 must be in [0, 1) (got %g)", o.beta2);
  if (!(o.eps > 0.0f)) fail(GRPO_ERR_VALUE_RANGE, "eps must be > 0 (got %g)", o.eps);
  if (!(o.weight_decay >= 0.0f)) fail(GRPO_ERR_VALUE_RANGE, "weight_decay must be >= 0 (got %g)", o.weight_decay);
}

struct AdamwScalars {
  float lr, beta1, beta2, eps;
  float clip;    // gradient scale from global-norm clipping (1: none)
  float c1, c2;  // bias corrections 1 / (1 − β^step)
};

// Scalars of step number `step` (already incremented) for a gradient of global L2 norm `norm`;
// fails when the norm is not finite.
inline AdamwScalars adamw_scalars(const grpo_adamw_options& o, double norm, int64_t step) {
  if (!std::isfinite(norm)) fail(GRPO_ERR_NON_FINITE, "gradient norm is not finite; parameters left unchanged");
  const float clip = o.max_grad_norm > 0.0f && norm > o.max_grad_norm ? static_cast<float>(o.max_grad_norm / (norm + 1e-6)) : 1.0f;
  const float c1 = 1.0f / (1.0f - std::pow(o.beta1, static_cast<float>(step)));
  const float c2 = 1.0f / (1.0f - std::pow(o.beta2, static_cast<float>(step)));
  return {o.lr, o.beta1, o.beta2, o.eps, clip, c1, c2};
}

// One element: moments, decoupled decay (`decay` = lr · weight_decay for decayed tensors, else 0), step;
// the gradient is zeroed.
GRPO_ADAMW_HD void adamw_update(const AdamwScalars& s, float decay, float& p, float& g, float& m, float& v) {
  const float grad = g * s.clip;
  m = s.beta1 * m + (1.0f - s.beta1) * grad;
  v = s.beta2 * v + (1.0f - s.beta2) * grad * grad;
  p -= decay * p + s.lr * (m * s.c1) / (sqrtf(v * s.c2) + s.eps);
  g = 0.0f;
}

}  // namespace grpo::model
