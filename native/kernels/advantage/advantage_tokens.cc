// Advantages onto tokens: Rank-GRPO's per-item scatter with length shaping, and the broadcast
// of sequence advantages under a truncation policy. Rows are independent (parallel over rows).
#include <cmath>

#include "advantage_checks.h"
#include "grpo/advantage.h"
#include "runtime/error.h"
#include "runtime/thread_pool.h"

namespace grpo {

namespace {

constexpr int64_t kTokensPerTask = 1 << 14;

int64_t rows_per_task(int64_t cols) { return cols >= kTokensPerTask ? 1 : kTokensPerTask / (cols > 0 ? cols : 1); }

struct RowShape {
  int64_t items_emitted;  // max segment + 1 over the row's masked tokens
  bool overflow;          // some masked token has segment >= ranks
};

RowShape row_shape(const int32_t* seg, const uint8_t* mask, int64_t cols, int64_t ranks, int64_t row) {
  RowShape shape{0, false};
  for (int64_t t = 0; t < cols; ++t) {
    if (seg[t] < -1)
      fail(GRPO_ERR_INDEX_RANGE, "segments[%lld, %lld] = %d is below -1", static_cast<long long>(row),
           static_cast<long long>(t), seg[t]);
    if (!mask[t]) continue;
    if (seg[t] + 1 > shape.items_emitted) shape.items_emitted = seg[t] + 1;
    shape.overflow = shape.overflow || seg[t] >= ranks;
  }
  return shape;
}

// Rank-GRPO L1825–1851: advantage of the token's item, no advantage on EOS, then shaping.
void scatter_row(const float* item_adv, const int32_t* seg, const uint8_t* mask, int32_t eos, int64_t cols,
                 int64_t ranks, const grpo_length_shaping& shaping, int64_t row, float* out) {
  const RowShape shape = row_shape(seg, mask, cols, ranks, row);
  for (int64_t t = 0; t < cols; ++t) {
    const bool content = mask[t] && seg[t] >= 0 && seg[t] < ranks && t != eos;
    float a = content ? item_adv[seg[t]] : 0.0f;
    if (shaping.enabled && mask[t] && seg[t] >= ranks) a += shaping.extra_token;
    out[t] = a;
  }
  if (!shaping.enabled || eos < 0) return;
  if (shape.items_emitted >= ranks && !shape.overflow) out[eos] += shaping.end_of_list;
  if (shape.items_emitted < ranks) out[eos] += shaping.early_stop;
}

bool keeps_token(int64_t t, bool truncated, int32_t prefix_end, int32_t policy) {
  if (!truncated || policy == GRPO_TRUNCATION_KEEP) return true;
  return policy == GRPO_TRUNCATION_DROP_SUFFIX && t < prefix_end;
}

}  // namespace

void scatter_item_advantages(const float* item_adv, const int32_t* segments, const uint8_t* mask, const int32_t* eos,
                             int64_t rows, int64_t cols, int64_t ranks, const grpo_length_shaping& shaping, float* out) {
  parallel_for(rows, rows_per_task(cols), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      if (eos[b] < -1 || eos[b] >= cols)
        fail(GRPO_ERR_INDEX_RANGE, "eos_positions[%lld] = %d is outside [-1, %lld)", static_cast<long long>(b), eos[b],
             static_cast<long long>(cols));
      scatter_row(item_adv + b * ranks, segments + b * cols, mask + b * cols, eos[b], cols, ranks, shaping, b,
                  out + b * cols);
    }
  });
}

void broadcast_advantages(const float* adv, const uint8_t* mask, const uint8_t* truncated, const int32_t* prefix_end,
                          int64_t rows, int64_t cols, int32_t policy, float* out, uint8_t* loss_mask) {
  parallel_for(rows, rows_per_task(cols), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const bool cut = truncated && truncated[b];
      const int32_t prefix = prefix_end ? prefix_end[b] : 0;
      for (int64_t t = b * cols; t < (b + 1) * cols; ++t) {
        const bool keep = mask[t] && keeps_token(t - b * cols, cut, prefix, policy);
        loss_mask[t] = keep;
        out[t] = keep ? adv[b] : 0.0f;
      }
    }
  });
}

}  // namespace grpo

extern "C" grpo_status grpo_scatter_item_advantages(const float* item_advantages, const int32_t* segments,
                                                    const uint8_t* mask, const int32_t* eos_positions, int64_t rows,
                                                    int64_t cols, int64_t ranks, const grpo_length_shaping* shaping,
                                                    float* out) {
  return grpo::guarded([&] {
    if (!shaping) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "shaping must not be NULL");
    if (rows < 0 || cols < 0 || ranks < 1) grpo::fail(GRPO_ERR_SHAPE, "expected rows, cols >= 0 and ranks >= 1");
    if (rows > 0 && (!item_advantages || !segments || !mask || !eos_positions || !out))
      grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "item_advantages, segments, mask, eos_positions and out must not be NULL");
    grpo::scatter_item_advantages(item_advantages, segments, mask, eos_positions, rows, cols, ranks, *shaping, out);
  });
}

extern "C" grpo_status grpo_broadcast_advantages(const float* advantages, const uint8_t* mask, const uint8_t* truncated,
                                                 const int32_t* prefix_end, int64_t rows, int64_t cols, int32_t truncation,
                                                 float* out, uint8_t* loss_mask) {
  return grpo::guarded([&] {
    grpo::advantage_checks::broadcast(advantages, mask, truncated, prefix_end, rows, cols, truncation, out, loss_mask);
    grpo::broadcast_advantages(advantages, mask, truncated, prefix_end, rows, cols, truncation, out, loss_mask);
  });
}
