// RMSNorm (Llama/Qwen): y = x / sqrt(mean(x²) + eps) · w, computed in float with a double sum.
#pragma once

#include <cstdint>

namespace grpo::model {

// y [T, H]; inv_rms [T] (kept for backward; may be null)
void rmsnorm_forward(const float* x, const float* w, int64_t T, int64_t H, float eps, float* y, float* inv_rms);

// dx [T, H] += d/dx;  dw [H] += d/dw when dw is set (rows summed in order, so the result does not depend on threads)
void rmsnorm_backward(const float* x, const float* w, const float* inv_rms, const float* dy, int64_t T, int64_t H,
                      float* dx, float* dw);

}  // namespace grpo::model
