// Device passes over one sampling row, one block per row; the block's threads stride over the vocabulary.
// The row lives in two global scratch rows (L2-resident for one row at a time): y (logits after the allow
// mask and penalties) and w = exp((y − max)/T). Every decision that picks tokens is exact, so the GPU keeps
// the CPU's tokens: counts are integers, the draw sums fixed-point integers, w uses the CPU's exp bit for bit
// (row_math.cuh). Only Σw (top-p's target and logp_raw) is a float sum in another order: see docs/cuda.md.
#pragma once

#include <cstdint>

#include "row_math.cuh"

namespace grpo::cuda::sampling {

constexpr int kThreads = 512;

struct Scratch {  // shared memory of one block
  RowScratch row;
  double d[kMaxWarps];
  unsigned long long u[kMaxWarps];
};

// Order-preserving map of floats to unsigned keys: a < b ⇔ key(a) < key(b), a == b ⇔ key(a) == key(b)
// (-0 is +0; no NaN here).
__host__ __device__ inline uint32_t order_key(float f) {
  const uint32_t bits = float_bits(f == 0.0f ? 0.0f : f);
  return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}
__host__ __device__ inline float key_float(uint32_t key) { return bits_float(key & 0x80000000u ? key & 0x7FFFFFFFu : ~key); }

struct WeightSum {
  double mass;               // Σ w
  unsigned long long positive;  // tokens with w > 0
};

// w = exp((y − max)·inv); the sums in double (per thread, then a fixed tree).
__device__ inline WeightSum exp_weights(const float* y, int64_t n, float max, float inv, float* w, Scratch& s) {
  double mass = 0.0;
  unsigned long long positive = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float e = exp_nonpositive((y[i] - max) * inv);
    w[i] = e;
    mass += e;
    positive += e > 0.0f;
  }
  return {block_reduce(mass, Sum{}, s.d), block_reduce(positive, Sum{}, s.u)};
}

// w = 0 where y < cut; the remaining Σ w and positive count.
__device__ inline WeightSum cut_below(const float* y, float* w, int64_t n, float cut, Scratch& s) {
  double mass = 0.0;
  unsigned long long positive = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float kept = y[i] >= cut ? w[i] : 0.0f;
    w[i] = kept;
    mass += kept;
    positive += kept > 0.0f;
  }
  return {block_reduce(mass, Sum{}, s.d), block_reduce(positive, Sum{}, s.u)};
}

// F(key) over tokens with w > 0 and order_key(y) >= key: their count, or their Σ w.
template <bool kMass>
__device__ inline double tail_measure(const float* y, const float* w, int64_t n, uint32_t key, Scratch& s) {
  double mass = 0.0;
  unsigned long long count = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const bool in = w[i] > 0.0f && order_key(y[i]) >= key;
    if (kMass) mass += in ? w[i] : 0.0f;
    count += in;
  }
  return kMass ? block_reduce(mass, Sum{}, s.d) : static_cast<double>(block_reduce(count, Sum{}, s.u));
}

// The cut "largest present y with F(y) >= target" by bisection on the 32 key bits (F is non-increasing,
// and the largest key with F >= target is a present y). When rounding leaves even F(all) short of the
// target, the smallest y with w > 0 (the CPU's most inclusive cut).
template <bool kMass>
__device__ inline float threshold_search(const float* y, const float* w, int64_t n, double target, Scratch& s) {
  uint32_t key = 0;
  if (tail_measure<kMass>(y, w, n, 0u, s) < target) {
    float lowest = INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) lowest = w[i] > 0.0f && y[i] < lowest ? y[i] : lowest;
    return -block_reduce(-lowest, Max{}, s.row.f);
  }
  for (int bit = 31; bit >= 0; --bit) {
    const uint32_t candidate = key | (1u << bit);
    if (tail_measure<kMass>(y, w, n, candidate, s) >= target) key = candidate;
  }
  return key_float(key);
}

// floor(w · 2^(24 + low_bits)) as the CPU computes it (two exact float → int truncations).
__host__ __device__ inline uint64_t fixed_point(float w, float low_scale, int low_bits) {
  const float scaled = w * 16777216.0f;
  const int32_t high = static_cast<int32_t>(scaled);
  const int32_t low = static_cast<int32_t>((scaled - static_cast<float>(high)) * low_scale);
  return (static_cast<uint64_t>(high) << low_bits) + static_cast<uint64_t>(low);
}

struct Kept {
  float cut, w_min;
  int low_bits;
  __device__ uint64_t q(float y, float w) const {
    return y >= cut && w >= w_min ? fixed_point(w, static_cast<float>(1ll << low_bits), low_bits) : 0;
  }
};

__device__ inline unsigned long long fixed_total(const float* y, const float* w, int64_t n, const Kept& k, Scratch& s) {
  unsigned long long total = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) total += k.q(y[i], w[i]);
  return block_reduce(total, Sum{}, s.u);
}

// The smallest id whose inclusive prefix of q exceeds target, chunk by chunk of blockDim tokens.
__device__ inline int64_t inverse_cdf(const float* y, const float* w, int64_t n, const Kept& k, uint64_t target,
                                      Scratch& s) {
  __shared__ uint64_t chunk_q[kThreads];
  for (int64_t begin = 0; begin < n; begin += blockDim.x) {
    const int64_t i = begin + threadIdx.x;
    const uint64_t q = i < n ? k.q(y[i], w[i]) : 0;
    const unsigned long long sum = block_reduce(static_cast<unsigned long long>(q), Sum{}, s.u);
    if (target >= sum) {
      target -= sum;
      continue;
    }
    chunk_q[threadIdx.x] = q;
    __syncthreads();
    int64_t token = begin;
    for (;; ++token) {  // every thread walks the same ≤ blockDim entries
      const uint64_t qt = chunk_q[token - begin];
      if (target < qt) break;
      target -= qt;
    }
    return token;
  }
  return n - 1;  // unreachable: target < total
}

}  // namespace grpo::cuda::sampling
