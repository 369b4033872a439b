// Philox4x32-10 counter-based generator (Salmon, Moraes, Dror, Shaw, SC'11; Random123 constants).
// Header-only and free of host-only calls so the CUDA sampler can include the same code and draw
// the same uniforms: the draw for (seed, row, step) never depends on threads or scheduling.
#pragma once

#include <cstdint>

namespace grpo::philox {

struct Block {
  uint32_t v[4];
};

inline void mul_hi_lo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(product >> 32);
  *lo = static_cast<uint32_t>(product);
}

// Ten rounds of the Philox S-box with the Weyl key schedule.
inline Block philox4x32_10(Block counter, uint32_t key0, uint32_t key1) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t* c = counter.v;
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kMul0, c[0], &hi0, &lo0);
    mul_hi_lo(kMul1, c[2], &hi1, &lo1);
    const Block next{{hi1 ^ c[1] ^ key0, lo1, hi0 ^ c[3] ^ key1, lo0}};
    counter = next;
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return counter;
}

// The 64-bit uniform of one draw: key = seed, counter = (step_lo, step_hi, row, 0), u = out1 << 32 | out0.
inline uint64_t draw_u64(uint64_t seed, uint64_t row, uint64_t step) {
  const Block counter{{static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32), static_cast<uint32_t>(row), 0u}};
  const Block out = philox4x32_10(counter, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  return static_cast<uint64_t>(out.v[1]) << 32 | out.v[0];
}

}  // namespace grpo::philox
