// bfloat16 bit patterns (the high 16 bits of an IEEE float32), shared by the CPU kernels and the CUDA
// backend: widening is exact; rounding is to nearest even, NaN stays NaN (quiet), overflow gives ±Infinity.
#pragma once

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define GRPO_BF16_HD __host__ __device__
#else
#define GRPO_BF16_HD
#endif

namespace grpo::bf16 {

GRPO_BF16_HD inline float widen(uint16_t value) {
  const uint32_t bits = static_cast<uint32_t>(value) << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

GRPO_BF16_HD inline uint16_t round(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // NaN, made quiet
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// The float nearest to f that bfloat16 can hold (f itself when it already is one).
GRPO_BF16_HD inline float round_float(float f) { return widen(round(f)); }

GRPO_BF16_HD inline bool finite(uint16_t value) { return (value & 0x7F80u) != 0x7F80u; }

}  // namespace grpo::bf16
