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
  double mass = 0.0;     // Σ w
  int64_t positive = 0;  // tokens with w > 0
  uint64_t fixed = 0;    // Σ fixed_point(w), when block sums were asked for
};

// The next row's simd::max_checked (its maximum and NaN / +Infinity flag), read during this row's exp pass
// so that its DRAM read overlaps the arithmetic: x [n] in, max and bad out.
struct NextMax {
  const float* x;
  float max;
  bool bad;
};

// w = exp((y - max) · inv_temperature); masked and underflowing tokens get exactly 0. With block_sums
// (NULL = none) it also does draw_block_sums(w, NULL, n, 0, low_bits, block_sums) while w is in L1;
// with next (NULL = none), next->max and next->bad of next->x [n].
WeightSum exp_weights(const float* y, int64_t n, float max, float inv_temperature, float* w, int low_bits,
                      uint64_t* block_sums, NextMax* next);

// block_max[b] = max w over [b·kMaxBlock, (b+1)·kMaxBlock): lets searches skip blocks below a threshold.
constexpr int64_t kMaxBlock = 64;
void block_maxima(const float* w, int64_t n, float* block_max);

struct TailStats {
  int64_t count;  // tokens with w >= pivot
  double mass;    // their Σ w
};

// out[p] = the TailStats at pivots[p], for kTailPivots pivots in one pass: each pivot's Σ w is one chain of
// dependent double adds (a fixed order), so the pass costs about what one pivot costs. Tokens are counted
// in chunks of kTailChunk, and the last n % kTailChunk one by one. chunks [count]: the ascending indices of
// the chunks to read, a superset of those holding a w >= the smallest pivot (the search drops the chunks
// below its lower bound); block_max [ceil(n / kMaxBlock)] (upper bounds, see block_maxima) lets it skip
// the listed chunks below every pivot (a chunk without a w >= pivot adds exactly 0 to that pivot's sums).
constexpr int64_t kTailChunk = 4 * kMaxBlock;
constexpr int kTailPivots = 3;
void tail_at_least(const float* w, const float* block_max, const int32_t* chunks, int64_t count, int64_t n,
                   const float* pivots, TailStats* out);

// The draw's fixed-point weights q = floor(w · 2^(24 + low_bits)) where w >= threshold, else 0:
// block_sums[b] = Σ q over [b·kDrawBlock, (b+1)·kDrawBlock); returns Σ q. block_max may be NULL.
constexpr int64_t kDrawBlock = 256;
// Low bits of the fixed point for a vocabulary (the CPU and the CUDA sampler must agree on it):
// Σ q <= vocab · 2^(24 + low) < 2^64 needs low <= 40 - bit_length(vocab); 26 keeps 16 lows per int32 lane.
inline int fixed_point_low_bits(int64_t vocab) {
  int bit_length = 0;
  while (bit_length < 63 && (int64_t{1} << bit_length) <= vocab) ++bit_length;
  const int low = 40 - bit_length;
  return low > 26 ? 26 : low;
}
uint64_t fixed_point(float w, int low_bits);  // q of one token
uint64_t draw_block_sums(const float* w, const float* block_max, int64_t n, float threshold, int low_bits,
                         uint64_t* block_sums);

}  // namespace grpo::sampling
