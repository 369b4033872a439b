// Advantages onto tokens on the GPU: Rank-GRPO's per-item scatter with length shaping (one thread per row)
// and the broadcast of sequence advantages under a truncation policy (one thread per token). Same float
// operations in the same order as native/kernels/advantage/advantage_tokens.cc, so the outputs are bitwise the CPU's.
// Index checks (segments >= -1, eos_positions in [-1, cols)) run on the host before the copy.
#include "device.cuh"
#include "advantage/advantage_checks.h"
#include "grpo/advantage.h"

namespace grpo::cuda {

namespace {

struct ScatterArgs {
  const float* item_adv;   // [rows, ranks]
  const int32_t* segments; // [rows, cols]
  const uint8_t* mask;     // [rows, cols]
  const int32_t* eos;      // [rows]
  int64_t rows, cols, ranks;
  grpo_length_shaping shaping;
  float* out;              // [rows, cols]
};

__global__ void scatter_kernel(ScatterArgs a) {
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < a.rows;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t* seg = a.segments + b * a.cols;
    const uint8_t* mask = a.mask + b * a.cols;
    float* out = a.out + b * a.cols;
    const int32_t eos = a.eos[b];
    int64_t items_emitted = 0;
    bool overflow = false;
    for (int64_t t = 0; t < a.cols; ++t) {
      if (!mask[t]) continue;
      if (seg[t] + 1 > items_emitted) items_emitted = seg[t] + 1;
      overflow = overflow || seg[t] >= a.ranks;
    }
    for (int64_t t = 0; t < a.cols; ++t) {
      const bool content = mask[t] && seg[t] >= 0 && seg[t] < a.ranks && t != eos;
      float adv = content ? a.item_adv[b * a.ranks + seg[t]] : 0.0f;
      if (a.shaping.enabled && mask[t] && seg[t] >= a.ranks) adv += a.shaping.extra_token;
      out[t] = adv;
    }
    if (!a.shaping.enabled || eos < 0) continue;
    if (items_emitted >= a.ranks && !overflow) out[eos] += a.shaping.end_of_list;
    if (items_emitted < a.ranks) out[eos] += a.shaping.early_stop;
  }
}

struct BroadcastArgs {
  const float* adv;          // [rows]
  const uint8_t* mask;       // [rows, cols]
  const uint8_t* truncated;  // [rows] or NULL
  const int32_t* prefix_end; // [rows] or NULL
  int64_t rows, cols;
  int32_t policy;
  float* out;                // [rows, cols]
  uint8_t* loss_mask;        // [rows, cols]
};

__global__ void broadcast_kernel(BroadcastArgs a) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < a.rows * a.cols;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = i / a.cols, t = i % a.cols;
    const bool cut = a.truncated && a.truncated[b];
    const bool kept_by_policy = !cut || a.policy == GRPO_TRUNCATION_KEEP ||
                                (a.policy == GRPO_TRUNCATION_DROP_SUFFIX && t < (a.prefix_end ? a.prefix_end[b] : 0));
    const bool keep = a.mask[i] && kept_by_policy;
    a.loss_mask[i] = keep;
    a.out[i] = keep ? a.adv[b] : 0.0f;
  }
}

void check_scatter_indices(const int32_t* segments, const int32_t* eos, int64_t rows, int64_t cols) {
  for (int64_t b = 0; b < rows; ++b) {  // in the CPU's order: a row's EOS, then its segments
    if (eos[b] < -1 || eos[b] >= cols)
      fail(GRPO_ERR_INDEX_RANGE, "eos_positions[%lld] = %d is outside [-1, %lld)", static_cast<long long>(b), eos[b],
           static_cast<long long>(cols));
    for (int64_t t = 0; t < cols; ++t)
      if (segments[b * cols + t] < -1)
        fail(GRPO_ERR_INDEX_RANGE, "segments[%lld, %lld] = %d is below -1", static_cast<long long>(b),
             static_cast<long long>(t), segments[b * cols + t]);
  }
}

}  // namespace

}  // namespace grpo::cuda

extern "C" grpo_status grpo_scatter_item_advantages(const float* item_advantages, const int32_t* segments,
                                                    const uint8_t* mask, const int32_t* eos_positions, int64_t rows,
                                                    int64_t cols, int64_t ranks, const grpo_length_shaping* shaping,
                                                    float* out) {
  using namespace grpo::cuda;
  return grpo::guarded([&] {
    if (!shaping) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "shaping must not be NULL");
    if (rows < 0 || cols < 0 || ranks < 1) grpo::fail(GRPO_ERR_SHAPE, "expected rows, cols >= 0 and ranks >= 1");
    if (rows > 0 && (!item_advantages || !segments || !mask || !eos_positions || !out))
      grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "item_advantages, segments, mask, eos_positions and out must not be NULL");
    check_scatter_indices(segments, eos_positions, rows, cols);
    if (rows == 0 || cols == 0) return;
    DeviceBuffer<float> d_items(item_advantages, rows * ranks), d_out(rows * cols);
    DeviceBuffer<int32_t> d_segments(segments, rows * cols), d_eos(eos_positions, rows);
    DeviceBuffer<uint8_t> d_mask(mask, rows * cols);
    scatter_kernel<<<blocks_for(rows), kThreads>>>(
        {d_items.get(), d_segments.get(), d_mask.get(), d_eos.get(), rows, cols, ranks, *shaping, d_out.get()});
    check_launch("scatter item advantages");
    d_out.download(out);
  });
}

extern "C" grpo_status grpo_broadcast_advantages(const float* advantages, const uint8_t* mask, const uint8_t* truncated,
                                                 const int32_t* prefix_end, int64_t rows, int64_t cols, int32_t truncation,
                                                 float* out, uint8_t* loss_mask) {
  using namespace grpo::cuda;
  return grpo::guarded([&] {
    grpo::advantage_checks::broadcast(advantages, mask, truncated, prefix_end, rows, cols, truncation, out, loss_mask);
    if (rows == 0 || cols == 0) return;
    DeviceBuffer<float> d_adv(advantages, rows), d_out(rows * cols);
    DeviceBuffer<uint8_t> d_mask(mask, rows * cols), d_truncated(truncated, rows), d_loss_mask(rows * cols);
    DeviceBuffer<int32_t> d_prefix(prefix_end, rows);
    broadcast_kernel<<<blocks_for(rows * cols), kThreads>>>({d_adv.get(), d_mask.get(), d_truncated.get(), d_prefix.get(),
                                                             rows, cols, truncation, d_out.get(), d_loss_mask.get()});
    check_launch("broadcast advantages");
    d_out.download(out);
    d_loss_mask.download(loss_mask);
  });
}
