#include "sampling_passes.h"

#include <algorithm>
#include <limits>

#include "runtime/simd.h"

namespace grpo::sampling {

using simd::kLanes;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

GRPO_CLONES void masked_copy(const float* __restrict x, int64_t n, const uint32_t* __restrict allow, float* __restrict y) {
  if (!allow) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i];
    return;
  }
  // Word by word, so the bit of token i is a shift of a loop-invariant word (the per-token word load
  // allow[i >> 5] is a gather GCC does not vectorise).
  const uint32_t minus_inf = simd::float_to_bits(-kInf);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const uint32_t word = allow[i >> 5];
    for (int b = 0; b < 32; ++b) {
      const uint32_t keep = 0u - ((word >> b) & 1u);
      y[i + b] = simd::bits_to_float((simd::float_to_bits(x[i + b]) & keep) | (minus_inf & ~keep));
    }
  }
  for (; i < n; ++i) y[i] = (allow[i >> 5] >> (i & 31)) & 1u ? x[i] : -kInf;
}

// The passes below keep float / int32 lane sums over chunks of kChunk tokens (the shapes GCC
// vectorises) and add each chunk's sums into doubles, so a row's Σ w carries ~1e-7 relative error.
constexpr int64_t kChunk = 256;
using simd::kExpZeroBelow;  // simd::exp_nonpositive is exactly 0 below this

// Σ floor(w · 2^(24 + low_bits)) over kDrawBlock weights, as 16 int32 lanes of high and low parts
// (fixed_point by hand: GCC vectorises this form; 16 tokens per lane keep each lane below 2^30).
GRPO_INLINE uint64_t block_fixed_sum(const float* __restrict w, float low_scale, int low_bits) {
  static_assert(kDrawBlock == 16 * kLanes, "16 tokens per int32 lane");
  int32_t high[kLanes] = {}, low[kLanes] = {};
  for (int64_t g = 0; g < kDrawBlock; g += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float scaled = w[g + l] * 16777216.0f;
      const int32_t h = static_cast<int32_t>(scaled);
      high[l] += h;
      low[l] += static_cast<int32_t>((scaled - static_cast<float>(h)) * low_scale);
    }
  uint64_t high_sum = 0, low_sum = 0;
  for (int l = 0; l < kLanes; ++l) high_sum += high[l], low_sum += low[l];
  return (high_sum << low_bits) + low_sum;
}

// One chunk of exp_weights: w and its lane sums; with kNext also the lane maxima of the next row (as
// simd::max_checked: NaN never wins, NaN and +Infinity set the flag).
template <bool kNext>
GRPO_INLINE void exp_chunk(const float* __restrict y, const float* __restrict next, float max, float inv_temperature,
                           float* __restrict w, float* mass, int32_t* positive, float* next_max, int32_t* next_bad) {
  for (int64_t g = 0; g < kChunk; g += kLanes) {
    if (kNext) __builtin_prefetch(next + g + simd::kPrefetchAhead);
    for (int l = 0; l < kLanes; ++l) {
      const float d = (y[g + l] - max) * inv_temperature;
      const float e = simd::exp_nonpositive(d);
      w[g + l] = e;
      mass[l] += e;
      positive[l] += d >= kExpZeroBelow;
      if (kNext) {
        const float v = next[g + l];
        next_bad[l] |= !(v < kInf);
        next_max[l] = v > next_max[l] ? v : next_max[l];
      }
    }
  }
}

GRPO_CLONES WeightSum exp_weights(const float* __restrict y, int64_t n, float max, float inv_temperature,
                                  float* __restrict w, int low_bits, uint64_t* __restrict block_sums, NextMax* next) {
  static_assert(kChunk == kDrawBlock, "one draw block per chunk");
  const float low_scale = static_cast<float>(int64_t{1} << low_bits);
  WeightSum sum{0.0, 0, 0};
  float next_max[kLanes];
  int32_t next_bad[kLanes] = {};
  for (int l = 0; l < kLanes; ++l) next_max[l] = -kInf;
  int64_t i = 0;
  for (int64_t b = 0; i + kChunk <= n; i += kChunk, ++b) {
    float mass[kLanes] = {};
    int32_t positive[kLanes] = {};
    if (next) exp_chunk<true>(y + i, next->x + i, max, inv_temperature, w + i, mass, positive, next_max, next_bad);
    else exp_chunk<false>(y + i, nullptr, max, inv_temperature, w + i, mass, positive, nullptr, nullptr);
    for (int l = 0; l < kLanes; ++l) sum.mass += mass[l], sum.positive += positive[l];
    if (block_sums) sum.fixed += block_sums[b] = block_fixed_sum(w + i, low_scale, low_bits);  // w is still in L1
  }
  uint64_t tail = 0;
  for (int64_t t = i; t < n; ++t) {
    w[t] = simd::exp_nonpositive((y[t] - max) * inv_temperature);
    sum.mass += w[t];
    sum.positive += w[t] > 0.0f;
    tail += fixed_point(w[t], low_bits);
  }
  if (block_sums && n % kDrawBlock) sum.fixed += block_sums[n / kDrawBlock] = tail;
  if (!next) return sum;
  for (int64_t t = i; t < n; ++t) {  // token t in lane t % kLanes and the lanes reduced in order, as max_checked
    const float v = next->x[t];
    next_bad[t % kLanes] |= !(v < kInf);
    next_max[t % kLanes] = v > next_max[t % kLanes] ? v : next_max[t % kLanes];
  }
  next->max = -kInf, next->bad = false;
  for (int l = 0; l < kLanes; ++l) next->max = next_max[l] > next->max ? next_max[l] : next->max, next->bad |= next_bad[l] != 0;
  return sum;
}

GRPO_CLONES void tail_at_least(const float* __restrict w, const float* __restrict block_max,
                               const int32_t* __restrict chunks, int64_t count, int64_t n, const float* pivots,
                               TailStats* out) {
  static_assert(kChunk == kTailChunk, "a chunk spans four block maxima");
  float pivot[kTailPivots];
  for (int p = 0; p < kTailPivots; ++p) pivot[p] = pivots[p], out[p] = TailStats{0, 0.0};
  const float lowest = std::min(std::min(pivot[0], pivot[1]), pivot[2]);
  for (int64_t k = 0; k < count; ++k) {
    const float* bound = block_max + 4 * chunks[k];
    if (std::max(std::max(bound[0], bound[1]), std::max(bound[2], bound[3])) < lowest) continue;
    const float* chunk = w + chunks[k] * kChunk;
    float mass[kTailPivots][kLanes] = {};
    int32_t counted[kTailPivots][kLanes] = {};
    for (int64_t g = 0; g < kChunk; g += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const float v = chunk[g + l];
#pragma GCC unroll 3
        for (int p = 0; p < kTailPivots; ++p) {
          const bool in = v >= pivot[p];
          mass[p][l] += in ? v : 0.0f;
          counted[p][l] += in;
        }
      }
    for (int p = 0; p < kTailPivots; ++p)
      for (int l = 0; l < kLanes; ++l) out[p].mass += mass[p][l], out[p].count += counted[p][l];
  }
  for (int p = 0; p < kTailPivots; ++p)
    for (int64_t i = n / kChunk * kChunk; i < n; ++i)
      if (w[i] >= pivot[p]) out[p].mass += w[i], ++out[p].count;
}

GRPO_CLONES void block_maxima(const float* __restrict w, int64_t n, float* __restrict block_max) {
  int64_t i = 0, b = 0;
  for (; i + kMaxBlock <= n; i += kMaxBlock, ++b) {
    // On the bits: for w >= 0 the unsigned order is the float order, and GCC vectorises an integer max
    // reduction (a float one it does not: the select is not reassociable under IEEE rules).
    uint32_t lane_max[kLanes] = {};
    for (int64_t g = i; g < i + kMaxBlock; g += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const uint32_t bits = simd::float_to_bits(w[g + l]);
        lane_max[l] = bits > lane_max[l] ? bits : lane_max[l];
      }
    uint32_t max = 0;
    for (int l = 0; l < kLanes; ++l) max = lane_max[l] > max ? lane_max[l] : max;
    block_max[b] = simd::bits_to_float(max);
  }
  if (i < n) {
    block_max[b] = 0.0f;
    for (; i < n; ++i) block_max[b] = w[i] > block_max[b] ? w[i] : block_max[b];
  }
}

namespace {

// floor(w · 2^(24 + low)) for w in [0, 1] as high · 2^low + low_part, from two exact float→int32
// truncations (they vectorise on every x86-64 path, unlike float→uint64).
struct FixedParts {
  int32_t high, low;
};

GRPO_INLINE FixedParts fixed_parts(float w, float low_scale) {
  const float scaled = w * 16777216.0f;  // w · 2^24, exact
  const int32_t high = static_cast<int32_t>(scaled);
  return {high, static_cast<int32_t>((scaled - static_cast<float>(high)) * low_scale)};
}

}  // namespace

uint64_t fixed_point(float w, int low_bits) {
  const FixedParts parts = fixed_parts(w, static_cast<float>(int64_t{1} << low_bits));
  return (static_cast<uint64_t>(parts.high) << low_bits) + static_cast<uint64_t>(parts.low);
}

GRPO_CLONES uint64_t draw_block_sums(const float* __restrict w, const float* __restrict block_max, int64_t n,
                                     float threshold, int low_bits, uint64_t* __restrict block_sums) {
  static_assert(kDrawBlock == 4 * kMaxBlock, "4 maxima per block");
  const float low_scale = static_cast<float>(int64_t{1} << low_bits);
  uint64_t total = 0;
  int64_t i = 0, b = 0;
  for (; i + kDrawBlock <= n; i += kDrawBlock, ++b) {
    const float* bound = block_max ? block_max + 4 * b : nullptr;
    if (bound && std::max(std::max(bound[0], bound[1]), std::max(bound[2], bound[3])) < threshold) {
      block_sums[b] = 0;
      continue;
    }
    float cut[kDrawBlock];  // the select and the conversions vectorise as two loops, not as one
    if (threshold > 0.0f)
      for (int64_t t = 0; t < kDrawBlock; ++t) cut[t] = w[i + t] >= threshold ? w[i + t] : 0.0f;
    block_sums[b] = block_fixed_sum(threshold > 0.0f ? cut : w + i, low_scale, low_bits);
    total += block_sums[b];
  }
  if (i < n) {
    block_sums[b] = 0;
    for (; i < n; ++i)
      if (w[i] >= threshold) block_sums[b] += fixed_point(w[i], low_bits);
    total += block_sums[b];
  }
  return total;
}

}  // namespace grpo::sampling
