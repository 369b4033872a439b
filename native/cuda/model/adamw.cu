// AdamW with global-norm clipping on the GPU (native/model/adamw.cc): the squared norm is summed in
// double over fixed blocks of the gradient, the partials added on the host in block order.
#include <cmath>
#include <vector>

#include "adamw_rule.h"
#include "model.cuh"
#include "reduce.cuh"

namespace grpo::cuda::model {

namespace {

constexpr int64_t kNormBlock = 65536;  // gradient elements per partial
constexpr int kNormThreads = 256;

__global__ void __launch_bounds__(kNormThreads) squared_norm_kernel(const float* g, int64_t n, double* partial) {
  __shared__ double scratch[kMaxWarps];
  const int64_t begin = blockIdx.x * kNormBlock, end = min(n, begin + kNormBlock);
  double sum = 0.0;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) sum += static_cast<double>(g[i]) * g[i];
  sum = block_reduce(sum, Sum{}, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

__global__ void adamw_kernel(grpo::model::AdamwScalars s, float decay, float* p, float* g, float* m, float* v, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    grpo::model::adamw_update(s, decay, p[i], g[i], m[i], v[i]);
}

double squared_norm(const DeviceArray<float>& g) {
  const int64_t blocks = (g.size() + kNormBlock - 1) / kNormBlock;
  if (blocks > 2147483647LL) fail(GRPO_ERR_SHAPE, "gradient too large for the norm kernel");
  DeviceArray<double> partial(blocks);
  squared_norm_kernel<<<static_cast<unsigned>(blocks), kNormThreads>>>(g.get(), g.size(), partial.get());
  check_launch("gradient norm");
  std::vector<double> host(static_cast<size_t>(blocks));
  partial.download(host.data());
  double total = 0.0;
  for (double x : host) total += x;
  return total;
}

}  // namespace

float adamw_step(Model& m, const grpo_adamw_options& o) {
  grpo::model::check_adamw_options(o);
  m.ensure_grads();
  if (m.adam_m.empty()) {
    m.adam_m.assign_zero(m.layout.total);
    m.adam_v.assign_zero(m.layout.total);
  }
  const double norm = std::sqrt(squared_norm(m.grads));
  const grpo::model::AdamwScalars scalars = grpo::model::adamw_scalars(o, norm, m.step + 1);
  ++m.step;
  for (const auto& slot : m.layout.slots) {
    const float decay = slot.matrix ? o.lr * o.weight_decay : 0.0f;
    const int64_t at = slot.offset;
    adamw_kernel<<<blocks_for(slot.size()), kThreads>>>(scalars, decay, m.params.get() + at, m.grads.get() + at,
                                                         m.adam_m.get() + at, m.adam_v.get() + at, slot.size());
  }
  check_launch("adamw");
  return static_cast<float>(norm);
}

}  // namespace grpo::cuda::model
