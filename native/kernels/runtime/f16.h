// IEEE 754 half-precision (float16) bit patterns: 1 sign, 5 exponent, 10 mantissa bits. The scalar reference of
// the widening that widen16.cc vectorises (F16C / AVX-512 vcvtph2ps give the same bits): widening is exact,
// subnormals included; NaN stays NaN with its payload and the quiet bit set (as vcvtph2ps sets it). Rounding is
// to nearest even; beyond ±65504 (from 65520 on) it gives ±Infinity.
#pragma once

#include <cstdint>
#include <cstring>

namespace grpo::f16 {

inline float widen(uint16_t value) {
  const uint32_t sign = static_cast<uint32_t>(value & 0x8000u) << 16;
  const uint32_t magnitude = value & 0x7FFFu;
  uint32_t bits;
  if (magnitude >= 0x7C00u) {  // Infinity, NaN (quiet)
    const uint32_t mantissa = (magnitude & 0x3FFu) << 13;
    bits = 0x7F800000u | mantissa | (mantissa != 0 ? 0x400000u : 0u);
  } else if (magnitude >= 0x400u) {  // normal: rebias the exponent from 15 to 127
    bits = (magnitude << 13) + ((127u - 15u) << 23);
  } else {  // zero or subnormal: magnitude · 2^-24, exact in float
    const float f = static_cast<float>(magnitude) * 0x1p-24f;
    std::memcpy(&bits, &f, sizeof bits);
  }
  bits |= sign;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t round(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu);  // NaN, made quiet
  if (magnitude >= 0x477FF000u) return sign | 0x7C00u;                                 // 65520 and up: Infinity
  if (magnitude >= 0x38800000u) {  // normal half (2^-14 and up): drop 13 mantissa bits, to nearest even
    const uint32_t rebiased = magnitude - ((127u - 15u) << 23);
    return sign | static_cast<uint16_t>((rebiased + 0xFFFu + ((rebiased >> 13) & 1u)) >> 13);
  }
  // subnormal or zero: adding 0.5 leaves the half's mantissa in the low bits, rounded by the float addition
  float small;
  std::memcpy(&small, &magnitude, sizeof small);
  const float shifted = small + 0.5f;
  uint32_t shifted_bits;
  std::memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
  return sign | static_cast<uint16_t>(shifted_bits - 0x3F000000u);
}

inline bool finite(uint16_t value) { return (value & 0x7C00u) != 0x7C00u; }

}  // namespace grpo::f16
