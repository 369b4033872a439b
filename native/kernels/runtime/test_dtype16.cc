// The 16-bit float types of a frozen base (dtype16.h), on all 65,536 bit patterns of each:
// - f16::widen equals an independent reference (sign · mantissa · 2^exponent from the fields, in double), NaN aside,
//   where it keeps the payload and sets the quiet bit;
// - each float16 widening this CPU runs (scalar, F16C, AVX-512) gives f16::widen's bits, at every length and offset
//   that exercises their vector bodies and scalar tails;
// - f16::round inverts the widening on every non-NaN pattern (±0, subnormals, ±Infinity) and rounds to nearest
//   even between neighbours; bf16 likewise.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "check.h"
#include "dtype16.h"

namespace {

using grpo::dtype16_detail::f16_widening;

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// IEEE half from its fields, computed in double (exact: at most 11 significant bits).
double half_reference(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  const double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                           : exponent == 31 ? std::numeric_limits<double>::infinity()
                                            : std::ldexp(1024 + mantissa, exponent - 25);
  return sign ? -magnitude : magnitude;
}

bool is_nan_pattern(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; }

void scalar_widening_matches_reference() {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = grpo::f16::widen(static_cast<uint16_t>(h));
    if (is_nan_pattern(static_cast<uint16_t>(h))) {
      const uint32_t expected = (h & 0x8000u) << 16 | 0x7FC00000u | (h & 0x3FFu) << 13;
      CHECK(bits_of(f) == expected);
    } else {
      const float expected = static_cast<float>(half_reference(static_cast<uint16_t>(h)));
      CHECK(bits_of(f) == bits_of(expected));  // by bits: -0 is not +0
    }
  }
}

void every_path_matches_scalar() {
  std::vector<uint16_t> all(0x10000);
  for (uint32_t h = 0; h <= 0xFFFF; ++h) all[h] = static_cast<uint16_t>(h);
  std::vector<float> expected(all.size());
  for (size_t i = 0; i < all.size(); ++i) expected[i] = grpo::f16::widen(all[i]);
  int paths = 0;
  for (const char* path : {"generic", "avx2", "avx512"}) {
    const auto widen = f16_widening(path);
    if (!widen) continue;
    ++paths;
    for (const int64_t offset : {0, 3}) {
      for (const int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{8}, int64_t{15}, int64_t{17}, int64_t{0x10000} - 3}) {
        std::vector<float> out(static_cast<size_t>(n) + 1, -1.0f);
        widen(all.data() + offset, n, out.data());
        CHECK(std::memcmp(out.data(), expected.data() + offset, sizeof(float) * n) == 0);
        CHECK(out[n] == -1.0f);  // nothing written past n
      }
    }
  }
  std::printf("float16 widening: %d path(s) on this CPU match the scalar reference on all 65536 patterns\n", paths);
  CHECK(paths >= 1);
}

void rounding_inverts_widening() {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto half = static_cast<uint16_t>(h);
    if (!is_nan_pattern(half)) CHECK(grpo::f16::round(grpo::f16::widen(half)) == half);
    else CHECK(is_nan_pattern(grpo::f16::round(grpo::f16::widen(half))));
    if ((h & 0x7F80) != 0x7F80 || (h & 0x7F) == 0) CHECK(grpo::bf16::round(grpo::bf16::widen(half)) == half);
  }
  // halfway between neighbours goes to the even one; just past halfway goes up; from 65520 on, Infinity
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    const double low = half_reference(static_cast<uint16_t>(h)), high = half_reference(static_cast<uint16_t>(h + 1));
    const auto mid = static_cast<float>((low + high) / 2);  // exact in float: 12 significant bits
    CHECK(grpo::f16::round(mid) == ((h & 1) ? h + 1 : h));
    CHECK(grpo::f16::round(std::nextafter(mid, 1e9f)) == h + 1);
    CHECK(grpo::f16::round(-std::nextafter(mid, 0.0f)) == (0x8000u | h));
  }
  CHECK(grpo::f16::round(65519.0f) == 0x7BFF);
  CHECK(grpo::f16::round(65520.0f) == 0x7C00);
  CHECK(grpo::f16::round(-1e30f) == 0xFC00);
  CHECK(grpo::f16::round(1e-9f) == 0);  // under half the smallest subnormal (2^-25)
}

}  // namespace

int main() {
  scalar_widening_matches_reference();
  every_path_matches_scalar();
  rounding_inverts_widening();
  return grpo::test::failures();
}
