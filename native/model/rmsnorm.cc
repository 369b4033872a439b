#include "rmsnorm.h"

#include <cmath>

#include "runtime/simd.h"
#include "runtime/thread_pool.h"

namespace grpo::model {

GRPO_CLONES void rmsnorm_forward(const float* x, const float* w, int64_t T, int64_t H, float eps, float* y, float* inv_rms) {
  parallel_for(T, 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* row = x + t * H;
      double sum = 0.0;
      for (int64_t h = 0; h < H; ++h) sum += static_cast<double>(row[h]) * row[h];
      const float r = static_cast<float>(1.0 / std::sqrt(sum / H + eps));
      if (inv_rms) inv_rms[t] = r;
      for (int64_t h = 0; h < H; ++h) y[t * H + h] = (row[h] * r) * w[h];
    }
  });
}

// dx = r·(w⊙dy) − x·r³·mean(x⊙w⊙dy);  dw = Σ_t dy⊙x·r
void rmsnorm_backward(const float* x, const float* w, const float* inv_rms, const float* dy, int64_t T, int64_t H,
                      float* dx, float* dw) {
  parallel_for(T, 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float *row = x + t * H, *g = dy + t * H;
      const float r = inv_rms[t];
      double dot = 0.0;
      for (int64_t h = 0; h < H; ++h) dot += static_cast<double>(row[h]) * w[h] * g[h];
      const float c = static_cast<float>(dot / H) * r * r * r;
      for (int64_t h = 0; h < H; ++h) dx[t * H + h] += r * w[h] * g[h] - row[h] * c;
    }
  });
  parallel_for(H, 64, [&](int64_t begin, int64_t end) {
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = begin; h < end; ++h) dw[h] += dy[t * H + h] * x[t * H + h] * inv_rms[t];
  });
}

}  // namespace grpo::model
