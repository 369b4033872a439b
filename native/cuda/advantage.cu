// Group and rank-wise advantage normalisation on the GPU. One thread per group computes the group's
// mean and std (ddof 1) in double in the CPU's member order (native/kernels/advantage/advantage.cc), so group
// statistics and advantages are bitwise the CPU's; index groups use the same counting-sort order, built
// on the host. The whole-batch statistics (scale "batch" and the returned stats) come from a one-block
// tree reduction: deterministic, but summed in another order than the CPU (|Δ| ~ 1e-16 relative in double).
#include <math_constants.h>

#include <cmath>

#include "device.cuh"
#include "advantage/advantage_checks.h"
#include "advantage/group_index.h"
#include "grpo/advantage.h"
#include "reduce.cuh"

namespace grpo::cuda {

namespace {

enum class Layout { kContiguous, kRankCells, kIndexed };

// Which rewards form group g: contiguous runs, rank cells of [groups, candidates, ranks], or index lists.
struct GroupView {
  Layout layout;
  int64_t count, size;                   // size: members per group (contiguous, rank cells)
  int64_t candidates, ranks;             // rank cells
  const int64_t *offsets, *order;        // index groups [count + 1], [n]

  __device__ int64_t members(int64_t g) const { return layout == Layout::kIndexed ? offsets[g + 1] - offsets[g] : size; }
  __device__ int64_t index(int64_t g, int64_t j) const {
    if (layout == Layout::kContiguous) return g * size + j;
    if (layout == Layout::kRankCells) return (g / ranks) * candidates * ranks + j * ranks + g % ranks;
    return order[offsets[g] + j];
  }
};

struct Stat {
  double mean, std;
  int64_t valid;
};

struct Counters {
  unsigned long long zero_std, cells_equal, cells_zero;
};

__device__ double reward_value(float r, int32_t nan_policy) {
  return isnan(r) && nan_policy == GRPO_ADV_NAN_AS_ZERO ? 0.0 : static_cast<double>(r);
}

__device__ Stat group_stat(const float* rewards, const GroupView& v, int64_t g, int32_t nan_policy) {
  double sum = 0.0;
  int64_t valid = 0;
  for (int64_t j = 0; j < v.members(g); ++j) {
    const double x = reward_value(rewards[v.index(g, j)], nan_policy);
    if (!isnan(x)) sum += x, ++valid;
  }
  const double mean = valid ? sum / valid : CUDART_NAN;
  double squares = 0.0;
  for (int64_t j = 0; j < v.members(g); ++j) {
    const double x = reward_value(rewards[v.index(g, j)], nan_policy);
    if (!isnan(x)) squares += __dmul_rn(x - mean, x - mean);  // unfused, as the CPU's baseline x86-64 build
  }
  return {mean, valid >= 2 ? sqrt(squares / (valid - 1)) : CUDART_NAN, valid};
}

// `inverse` = 1 / (std + eps), or 1 without scaling: a multiply by the reciprocal, as the CPU does.
__device__ double advantage(double x, const Stat& group, double inverse, const grpo_advantage_options& o) {
  if (isnan(x)) return 0.0;
  if (group.valid < 2) {
    if (o.singleton == GRPO_ADV_SINGLETON_ZERO) return 0.0;
    if (o.singleton == GRPO_ADV_SINGLETON_NAN) return CUDART_NAN;
    return o.scale == GRPO_ADV_SCALE_NONE ? x : x / (1.0 + o.std_epsilon);
  }
  const double a = (x - group.mean) * inverse;
  return isfinite(a) ? a : 0.0;
}

// Two block reductions over all n rewards (mean, then squared deviations); one block of kBatchThreads.
constexpr int kBatchThreads = 1024;

__global__ void __launch_bounds__(kBatchThreads) batch_kernel(const float* rewards, int64_t n, int32_t nan_policy,
                                                               Stat* out) {
  __shared__ double scratch[kMaxWarps];
  __shared__ unsigned long long counts[kMaxWarps];
  double sum = 0.0;
  unsigned long long valid = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const double x = reward_value(rewards[i], nan_policy);
    if (!isnan(x)) sum += x, ++valid;
  }
  sum = block_reduce(sum, Sum{}, scratch);
  valid = block_reduce(valid, Sum{}, counts);
  const double mean = valid ? sum / static_cast<double>(valid) : CUDART_NAN;
  double squares = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const double x = reward_value(rewards[i], nan_policy);
    if (!isnan(x)) squares += __dmul_rn(x - mean, x - mean);
  }
  squares = block_reduce(squares, Sum{}, scratch);
  if (threadIdx.x == 0)
    *out = {mean, valid >= 2 ? sqrt(squares / static_cast<double>(valid - 1)) : CUDART_NAN, static_cast<int64_t>(valid)};
}

// TRL's is_std_zero, as zero_std_for_logging in native/kernels/advantage/advantage.cc: the std of one row is 0.
__device__ bool zero_std_for_logging(double scale_std, int64_t rows) { return rows == 1 || fabs(scale_std) <= 1e-8; }

__global__ void group_kernel(const float* rewards, int64_t n, GroupView v, grpo_advantage_options o, const Stat* batch,
                             float* out, Counters* counters) {
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < v.count;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Stat group = group_stat(rewards, v, g, o.nan_rewards);
    const double scale_std = o.scale == GRPO_ADV_SCALE_BATCH ? batch->std : group.std;
    if (zero_std_for_logging(scale_std, o.scale == GRPO_ADV_SCALE_BATCH ? n : v.members(g)))
      atomicAdd(&counters->zero_std, static_cast<unsigned long long>(v.members(g)));
    const double inverse = o.scale == GRPO_ADV_SCALE_NONE ? 1.0 : 1.0 / (scale_std + o.std_epsilon);
    double first = CUDART_NAN;
    bool equal = true, zero = true;
    for (int64_t j = 0; j < v.members(g); ++j) {
      const int64_t i = v.index(g, j);
      const double x = reward_value(rewards[i], o.nan_rewards);
      out[i] = static_cast<float>(advantage(x, group, inverse, o));
      if (isnan(x)) continue;
      if (isnan(first)) first = x;
      equal = equal && x == first;
      zero = zero && x == 0.0;
    }
    if (v.layout != Layout::kRankCells) continue;  // the cell fractions are rank-wise only (0 otherwise, as the CPU)
    if (equal) atomicAdd(&counters->cells_equal, 1ull);
    if (zero) atomicAdd(&counters->cells_zero, 1ull);
  }
}

void normalize(const float* rewards, int64_t n, GroupView view, const grpo_advantage_options& o, float* advantages,
               grpo_advantage_stats* stats) {
  DeviceBuffer<float> d_rewards(rewards, n), d_out(n);
  DeviceBuffer<Stat> batch(1);
  DeviceBuffer<Counters> counters(1);
  counters.zero();
  KernelTimer timer;
  batch_kernel<<<1, kBatchThreads>>>(d_rewards.get(), n, o.nan_rewards, batch.get());
  group_kernel<<<blocks_for(view.count), kThreads>>>(d_rewards.get(), n, view, o, batch.get(), d_out.get(), counters.get());
  check_launch("advantages");
  timer.stop();
  d_out.download(advantages);
  if (!stats) return;
  Stat b;
  Counters c;
  batch.download(&b);
  counters.download(&c);
  const double cells = view.count > 0 ? static_cast<double>(view.count) : NAN;
  *stats = {b.mean, b.std, n > 0 ? static_cast<double>(c.zero_std) / n : NAN, c.cells_equal / cells,
            c.cells_zero / cells};
}

}  // namespace

}  // namespace grpo::cuda

extern "C" grpo_status grpo_group_advantages(const float* rewards, int64_t n, int64_t group_size, const int32_t* group_ids,
                                             int64_t num_groups, const grpo_advantage_options* options, float* advantages,
                                             grpo_advantage_stats* stats) {
  using namespace grpo::cuda;
  return grpo::guarded([&] {
    grpo::advantage_checks::group_call(rewards, n, group_size, group_ids, num_groups, options, advantages);
    if (!group_ids) {
      normalize(rewards, n, {Layout::kContiguous, n / group_size, group_size, 0, 0, nullptr, nullptr}, *options,
                advantages, stats);
      return;
    }
    const grpo::GroupIndex index = grpo::index_groups(group_ids, n, num_groups);
    DeviceBuffer<int64_t> d_offsets(index.offsets.data(), num_groups + 1), d_order(index.order.data(), n);
    normalize(rewards, n, {Layout::kIndexed, num_groups, 0, 0, 0, d_offsets.get(), d_order.get()}, *options, advantages,
              stats);
  });
}

extern "C" grpo_status grpo_rank_advantages(const float* rewards, int64_t groups, int64_t candidates, int64_t ranks,
                                            const grpo_advantage_options* options, float* advantages,
                                            grpo_advantage_stats* stats) {
  using namespace grpo::cuda;
  return grpo::guarded([&] {
    const int64_t n = grpo::advantage_checks::rank_call(rewards, groups, candidates, ranks, options, advantages);
    normalize(rewards, n, {Layout::kRankCells, groups * ranks, candidates, candidates, ranks, nullptr, nullptr}, *options,
              advantages, stats);
  });
}
