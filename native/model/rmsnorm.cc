#include "rmsnorm.h"

#include <cmath>

#include "runtime/simd.h"
#include "runtime/thread_pool.h"

namespace grpo::model {

namespace {

using simd::kLanes;

// Σ_h a[h]·b[h]·c[h] in double, kLanes partials combined in order (kThird false: c is not read, taken as 1). A
// template rather than a null test: the test inside the loop kept the backward's clones scalar.
template <bool kThird>
GRPO_INLINE double dot3(const float* a, const float* b, const float* c, int64_t n) {
  double acc[kLanes] = {};
  int64_t h = 0;
  for (; h + kLanes <= n; h += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += static_cast<double>(a[h + l]) * b[h + l] * (kThird ? c[h + l] : 1.0f);
  for (int l = 0; h + l < n; ++l) acc[l] += static_cast<double>(a[h + l]) * b[h + l] * (kThird ? c[h + l] : 1.0f);
  double sum = 0.0;
  for (int l = 0; l < kLanes; ++l) sum += acc[l];
  return sum;
}

// Rows [begin, end) of the forward (the per-row bodies live in clones: a lambda would get the baseline ISA).
GRPO_CLONES void forward_rows(const float* x, const float* w, int64_t begin, int64_t end, int64_t H, float eps, float* y,
                              float* inv_rms) {
  for (int64_t t = begin; t < end; ++t) {
    const float* row = x + t * H;
    const float r = static_cast<float>(1.0 / std::sqrt(dot3<false>(row, row, nullptr, H) / H + eps));
    if (inv_rms) inv_rms[t] = r;
    for (int64_t h = 0; h < H; ++h) y[t * H + h] = (row[h] * r) * w[h];
  }
}

GRPO_CLONES void backward_rows(const float* x, const float* w, const float* inv_rms, const float* dy, int64_t begin, int64_t end,
                               int64_t H, float* dx) {
  for (int64_t t = begin; t < end; ++t) {
    const float *row = x + t * H, *g = dy + t * H;
    const float r = inv_rms[t];
    const float c = static_cast<float>(dot3<true>(row, w, g, H) / H) * r * r * r;
    for (int64_t h = 0; h < H; ++h) dx[t * H + h] += r * w[h] * g[h] - row[h] * c;
  }
}

// dw[h] += Σ_t dy⊙x·r for columns [begin, end), token order kept per column.
GRPO_CLONES void weight_grad_columns(const float* x, const float* inv_rms, const float* dy, int64_t T, int64_t H, int64_t begin,
                                     int64_t end, float* dw) {
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = begin; h < end; ++h) dw[h] += dy[t * H + h] * x[t * H + h] * inv_rms[t];
}

}  // namespace

void rmsnorm_forward(const float* x, const float* w, int64_t T, int64_t H, float eps, float* y, float* inv_rms) {
  parallel_for(T, 16, [&](int64_t begin, int64_t end) { forward_rows(x, w, begin, end, H, eps, y, inv_rms); });
}

// dx = r·(w⊙dy) − x·r³·mean(x⊙w⊙dy);  dw = Σ_t dy⊙x·r
void rmsnorm_backward(const float* x, const float* w, const float* inv_rms, const float* dy, int64_t T, int64_t H,
                      float* dx, float* dw) {
  parallel_for(T, 16, [&](int64_t begin, int64_t end) { backward_rows(x, w, inv_rms, dy, begin, end, H, dx); });
  if (dw) parallel_for(H, 64, [&](int64_t begin, int64_t end) { weight_grad_columns(x, inv_rms, dy, T, H, begin, end, dw); });
}

}  // namespace grpo::model
