// Block-wide reductions in a fixed order (warp butterflies, then the warps' partials in warp order), so a
// kernel's result never depends on scheduling. Every thread of the block gets the result.
#pragma once

#include <cstdint>

namespace grpo::cuda {

constexpr int kWarp = 32;
constexpr int kMaxWarps = 32;

struct Max {
  __device__ float operator()(float a, float b) const { return b > a ? b : a; }
};
struct Sum {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct Min {
  template <typename T>
  __device__ T operator()(T a, T b) const { return b < a ? b : a; }
};
struct Or {
  __device__ int operator()(int a, int b) const { return a | b; }
};

// Needs `scratch` of kMaxWarps elements in shared memory; every thread of the block must call it.
template <typename T, typename Op>
__device__ T block_reduce(T value, Op op, T* scratch) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  __syncthreads();  // the previous call's readers are done with scratch
  if (threadIdx.x % kWarp == 0) scratch[threadIdx.x / kWarp] = value;
  __syncthreads();
  T total = scratch[0];
  for (int w = 1; w < static_cast<int>(blockDim.x) / kWarp; ++w) total = op(total, scratch[w]);
  return total;
}

}  // namespace grpo::cuda
