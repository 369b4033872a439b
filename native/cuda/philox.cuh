// Philox4x32-10 and the draw's 64-bit uniform, callable on host and device: the same rounds, constants and
// counter layout as native/kernels/runtime/philox.h (which is host-only C++), so the GPU draws what the CPU draws.
// test/cuda-parity.test.ts compares the two samplers token for token.
#pragma once

#include <cstdint>

namespace grpo::cuda::philox {

__host__ __device__ inline void philox4x32_10(uint32_t c[4], uint32_t key0, uint32_t key1) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c[0], p1 = static_cast<uint64_t>(kMul1) * c[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    const uint32_t next[4] = {hi1 ^ c[1] ^ key0, lo1, hi0 ^ c[3] ^ key1, lo0};
    for (int i = 0; i < 4; ++i) c[i] = next[i];
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
}

// key = seed, counter = (step_lo, step_hi, row, 0), u = out1 << 32 | out0.
__host__ __device__ inline uint64_t draw_u64(uint64_t seed, uint64_t row, uint64_t step) {
  uint32_t c[4] = {static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32), static_cast<uint32_t>(row), 0u};
  philox4x32_10(c, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  return static_cast<uint64_t>(c[1]) << 32 | c[0];
}

}  // namespace grpo::cuda::philox
