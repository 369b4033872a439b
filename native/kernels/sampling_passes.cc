#include "sampling_passes.h"

#include <limits>

#include "simd.h"

namespace grpo::sampling {

using simd::kLanes;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Calls op(i, lane) for i in [0, n): full groups of kLanes (which vectorise), then the tail.
template <typename Op>
GRPO_INLINE void for_lanes(int64_t n, Op&& op) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) op(i + l, l);
  for (int l = 0; i < n; ++i, ++l) op(i, l);
}

template <bool kMasked>
GRPO_INLINE RowLoad load_row_body(const float* x, int64_t n, const uint32_t* allow, float* y) {
  float lane_max[kLanes];
  int lane_bad[kLanes];
  for (int l = 0; l < kLanes; ++l) lane_max[l] = -kInf, lane_bad[l] = 0;
  for_lanes(n, [&](int64_t i, int l) {
    const float v = x[i];
    lane_bad[l] |= !(v < kInf);  // NaN and +Infinity both fail v < inf
    const float kept = kMasked && !((allow[i >> 5] >> (i & 31)) & 1u) ? -kInf : v;
    y[i] = kept;
    lane_max[l] = kept > lane_max[l] ? kept : lane_max[l];
  });
  RowLoad result{-kInf, false};
  for (int l = 0; l < kLanes; ++l) {
    result.max = lane_max[l] > result.max ? lane_max[l] : result.max;
    result.bad |= lane_bad[l] != 0;
  }
  return result;
}

GRPO_CLONES RowLoad load_row_masked(const float* x, int64_t n, const uint32_t* allow, float* y) {
  return load_row_body<true>(x, n, allow, y);
}

GRPO_CLONES RowLoad load_row_plain(const float* x, int64_t n, float* y) { return load_row_body<false>(x, n, nullptr, y); }

}  // namespace

RowLoad load_row(const float* x, int64_t n, const uint32_t* allow, float* y) {
  return allow ? load_row_masked(x, n, allow, y) : load_row_plain(x, n, y);
}

GRPO_CLONES WeightSum exp_weights(const float* y, int64_t n, float max, float inv_temperature, float* w) {
  double mass[kLanes] = {};
  int64_t positive[kLanes] = {};
  for_lanes(n, [&](int64_t i, int l) {
    const float e = simd::exp_nonpositive((y[i] - max) * inv_temperature);
    w[i] = e;
    mass[l] += e;
    positive[l] += e > 0.0f;
  });
  WeightSum sum{0.0, 0};
  for (int l = 0; l < kLanes; ++l) sum.mass += mass[l], sum.positive += positive[l];
  return sum;
}

GRPO_CLONES TailStats tail_at_least(const float* w, int64_t n, float pivot) {
  double mass[kLanes] = {};
  int64_t count[kLanes] = {};
  for_lanes(n, [&](int64_t i, int l) {
    const bool in = w[i] >= pivot;
    mass[l] += in ? w[i] : 0.0f;
    count[l] += in;
  });
  TailStats stats{0, 0.0};
  for (int l = 0; l < kLanes; ++l) stats.count += count[l], stats.mass += mass[l];
  return stats;
}

GRPO_CLONES WeightSum cut_below(const float* y, float* w, int64_t n, float cut) {
  double mass[kLanes] = {};
  int64_t positive[kLanes] = {};
  for_lanes(n, [&](int64_t i, int l) {
    const float kept = y[i] >= cut ? w[i] : 0.0f;
    w[i] = kept;
    mass[l] += kept;
    positive[l] += kept > 0.0f;
  });
  WeightSum sum{0.0, 0};
  for (int l = 0; l < kLanes; ++l) sum.mass += mass[l], sum.positive += positive[l];
  return sum;
}

int fixed_point_low_bits(int64_t vocab) {
  int bit_length = 0;
  while (bit_length < 63 && (int64_t{1} << bit_length) <= vocab) ++bit_length;
  // Σ q <= vocab · 2^(24 + low) < 2^64 needs low <= 40 - bit_length; b < 2^low must fit an int32.
  const int low = 40 - bit_length;
  return low > 30 ? 30 : low;
}

// floor(w · 2^(24 + low)) for w in [0, 1], from two exact float→int32 truncations (vectorises everywhere).
GRPO_INLINE uint64_t fixed_point_inline(float w, float low_scale, int low_bits) {
  const float scaled = w * 16777216.0f;  // w · 2^24, exact
  const int32_t high = static_cast<int32_t>(scaled);
  const int32_t low = static_cast<int32_t>((scaled - static_cast<float>(high)) * low_scale);
  return (static_cast<uint64_t>(high) << low_bits) + static_cast<uint64_t>(low);
}

uint64_t fixed_point(float w, int low_bits) {
  return fixed_point_inline(w, static_cast<float>(int64_t{1} << low_bits), low_bits);
}

GRPO_CLONES uint64_t draw_block_sums(const float* y, const float* w, int64_t n, float cut, float w_min, int low_bits,
                                     uint64_t* block_sums) {
  const float low_scale = static_cast<float>(int64_t{1} << low_bits);
  uint64_t total = 0;
  for (int64_t begin = 0, b = 0; begin < n; begin += kDrawBlock, ++b) {
    const int64_t end = begin + kDrawBlock < n ? begin + kDrawBlock : n;
    uint64_t sum = 0;
    for (int64_t i = begin; i < end; ++i) {
      const bool kept = y[i] >= cut && w[i] >= w_min;
      sum += kept ? fixed_point_inline(w[i], low_scale, low_bits) : 0;
    }
    block_sums[b] = sum;
    total += sum;
  }
  return total;
}

}  // namespace grpo::sampling
