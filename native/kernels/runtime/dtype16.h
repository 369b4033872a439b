// The 16-bit float types a frozen base may be kept in: bfloat16 (the high half of a float32, bf16.h) or IEEE
// float16 (f16.h). Widening to float32 is exact; float16 widens with F16C or AVX-512 vcvtph2ps where
// grpo_cpu_path() is avx2 or avx512, else with the scalar reference (the same bits).
#pragma once

#include <cstdint>

#include "bf16.h"
#include "f16.h"

namespace grpo {

enum class Dtype16 : uint8_t { bf16, f16 };

inline const char* dtype16_name(Dtype16 dtype) { return dtype == Dtype16::bf16 ? "bfloat16" : "float16"; }

inline float widen16(Dtype16 dtype, uint16_t value) { return dtype == Dtype16::bf16 ? bf16::widen(value) : f16::widen(value); }

// To nearest even (exact for a value the dtype holds).
inline uint16_t round16(Dtype16 dtype, float value) { return dtype == Dtype16::bf16 ? bf16::round(value) : f16::round(value); }

inline bool finite16(Dtype16 dtype, uint16_t value) { return dtype == Dtype16::bf16 ? bf16::finite(value) : f16::finite(value); }

// dst[0, n) = src[0, n) widened.
void widen16(Dtype16 dtype, const uint16_t* src, int64_t n, float* dst);

namespace dtype16_detail {

using Widen = void (*)(const uint16_t* src, int64_t n, float* dst);

// The float16 widening of a grpo_cpu_path() name ("avx512": AVX-512 vcvtph2ps, "avx2": F16C, "generic": the scalar
// reference), or null where this CPU or build lacks it. widen16 takes grpo_cpu_path()'s; the tests try each.
Widen f16_widening(const char* path);

}  // namespace dtype16_detail

}  // namespace grpo
