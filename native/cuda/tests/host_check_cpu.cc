// The CPU side of grpo_cuda_host_check: the kernels' exp polynomial in the same clones (and so with the same
// contractions) as the CPU sampler's passes.
#include <cstdint>

#include "runtime/simd.h"

GRPO_CLONES void cpu_exp_nonpositive(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = grpo::simd::exp_nonpositive(x[i]);
}
