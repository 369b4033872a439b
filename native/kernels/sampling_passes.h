// Vectorised passes over one sampling row. A row lives in L2-resident buffers:
//   y [vocab]: the logits after the allow mask (-Infinity when masked) and the penalties
//              (the caller's logits themselves when there is neither);
//   w [vocab]: weights exp((y - max y) / T) in [0, 1], the max token exactly 1.
// w is non-decreasing in y, so every cut is applied as "keep w >= threshold" (sampling_select.h).
#pragma once

#include <cstdint>

namespace grpo::sampling {

// y = x where the allow bit is set (every bit when allow is NULL), else -Infinity.
void masked_copy(const float* x, int64_t n, const uint32_t* allow, float* y);

struct WeightSum {
  double mass;       // Σ w
  int64_t positive;  // tokens with w > 0
};

// w = exp((y - max) · inv_temperature); masked and underflowing tokens get exactly 0.
WeightSum exp_weights(const float* y, int64_t n, float max, float inv_temperature, float* w);

struct TailStats {
  int64_t count;  // tokens with w >= pivot
  double mass;    // their Σ w
};

TailStats tail_at_least(const float* w, int64_t n, float pivot);

// w = 0 where w < threshold; returns the Σ w and positive count that remain.
WeightSum cut_below(float* w, int64_t n, float threshold);

// block_max[b] = max w over [b·kMaxBlock, (b+1)·kMaxBlock): lets searches skip blocks below a threshold.
constexpr int64_t kMaxBlock = 64;
void block_maxima(const float* w, int64_t n, float* block_max);

// The draw's fixed-point weights q = floor(w · 2^(24 + low_bits)) (cut tokens already have w = 0):
// block_sums[b] = Σ q over [b·kDrawBlock, (b+1)·kDrawBlock); returns Σ q.
constexpr int64_t kDrawBlock = 256;
int fixed_point_low_bits(int64_t vocab);
uint64_t fixed_point(float w, int low_bits);  // q of one token
uint64_t draw_block_sums(const float* w, int64_t n, int low_bits, uint64_t* block_sums);

}  // namespace grpo::sampling
