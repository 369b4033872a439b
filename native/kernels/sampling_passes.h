// Vectorised passes over one sampling row. The row lives in two scratch buffers that stay in L2:
//   y [vocab]: logits after the allow mask (-Infinity when masked) and penalties;
//   w [vocab]: weights exp((y - max y) / T), in [0, 1], the max token exactly 1.
// w is non-decreasing in y, so thresholds on w bound thresholds on y (sampling_select.h).
#pragma once

#include <cstdint>

namespace grpo::sampling {

struct RowLoad {
  float max;  // largest y (-Infinity when every token is masked)
  bool bad;   // the logits hold NaN or +Infinity
};

// y = x where the allow bit is set (every bit when allow is NULL), else -Infinity. Reads x once.
RowLoad load_row(const float* x, int64_t n, const uint32_t* allow, float* y);

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

// w = 0 where y < cut; returns the Σ w and positive count that remain.
WeightSum cut_below(const float* y, float* w, int64_t n, float cut);

// Fixed-point weights of the draw: q = floor(w · 2^shift) for tokens with y >= cut and w >= w_min, else 0.
// shift = 24 + low_bits (docs/sampling.md); block_sums[b] = Σ q over [b·kDrawBlock, (b+1)·kDrawBlock).
constexpr int64_t kDrawBlock = 256;
int fixed_point_low_bits(int64_t vocab);
uint64_t fixed_point(float w, int low_bits);
uint64_t draw_block_sums(const float* y, const float* w, int64_t n, float cut, float w_min, int low_bits,
                         uint64_t* block_sums);

}  // namespace grpo::sampling
