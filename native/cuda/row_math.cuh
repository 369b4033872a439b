// Per-row softmax math on the device, shared by the plain and fused log-prob kernels and the sampler.
// exp_nonpositive is the CPU's polynomial (native/kernels/runtime/simd.h) with every a·b + c as one fused
// multiply-add, which is what GCC emits in the AVX2 and AVX-512 clones (-ffp-contract=fast): the same
// bits as the CPU on any machine with FMA (the sampler's draws depend on them; host_check.cu checks it).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "reduce.cuh"

namespace grpo::cuda {

constexpr float kExpUnderflow = -103.9f;

// Bit casts usable on host and device (the host side serves native/cuda/tests/host_check.cu).
__host__ __device__ inline uint32_t float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
#endif
}

__host__ __device__ inline float bits_float(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

// fmaf is one correctly rounded fused multiply-add on both sides; nothing else here can be contracted.
__host__ __device__ inline float exp_nonpositive(float x) {
  const float clamped = x < -87.3f ? -87.3f : x;
  const float n = fmaf(clamped, 1.44269504088896341f, 12582912.0f) - 12582912.0f;
  float r = fmaf(-n, 0.693145751953125f, clamped);
  r = fmaf(-n, 1.428606765330187e-06f, r);
  float p = 1.0f / 720.0f;
  p = fmaf(p, r, 1.0f / 120.0f);
  p = fmaf(p, r, 1.0f / 24.0f);
  p = fmaf(p, r, 1.0f / 6.0f);
  p = fmaf(p, r, 0.5f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  const float scale = bits_float(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
  return x < -87.3f ? 0.0f : p * scale;
}

__device__ __forceinline__ float clamp_low(float d) { return d < kExpUnderflow ? kExpUnderflow : d; }

struct RowMax {
  float max;  // of x (unscaled); -Infinity when every entry is -Infinity
  bool bad;   // NaN or +Infinity present
};

struct Moments {
  float sum, dot;  // Σ e and Σ e·d, d = clamp_low(x·scale − shift), e = exp(d)
};

// Shared-memory scratch of one row reduction (a block works on one row at a time).
struct RowScratch {
  float f[kMaxWarps];
  int i[kMaxWarps];
};

__device__ inline RowMax block_row_max(const float* x, int64_t n, RowScratch& s) {
  float max = -INFINITY;
  int bad = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const float v = x[j];
    bad |= !(v < INFINITY);
    max = v > max ? v : max;
  }
  return {block_reduce(max, Max{}, s.f), block_reduce(bad, Or{}, s.i) != 0};
}

__device__ inline Moments block_moments(const float* x, int64_t n, float scale, float shift, RowScratch& s) {
  float sum = 0.0f, dot = 0.0f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const float d = clamp_low(x[j] * scale - shift);
    const float e = exp_nonpositive(d);
    sum += e;
    dot += e * d;
  }
  return {block_reduce(sum, Sum{}, s.f), block_reduce(dot, Sum{}, s.f)};
}

// out[j] = scale · (−g_logp · p_j − g_entropy · p_j · (log p_j + H)), then + scale · g_logp at the target
// (local_target < 0: not in this span). `out` may alias `x`: each thread reads its entries before writing them.
__device__ inline void block_row_backward(const float* x, int64_t n, float scale, float max, float log_sum,
                                          float entropy, float g_logp, float g_entropy, int64_t local_target,
                                          float* out) {
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const float log_p = clamp_low((x[j] * scale - max) - log_sum);
    const float p = exp_nonpositive(log_p);
    out[j] = scale * (-g_logp * p - g_entropy * p * (log_p + entropy)) + (j == local_target ? scale * g_logp : 0.0f);
  }
}

}  // namespace grpo::cuda
