#include "advantage_checks.h"

#include <cstring>

#include "runtime/simd.h"

namespace grpo::advantage_checks {

// No early exit, on the bits: the scan vectorises (its baseline clone alone took 9 µs of a 64K-reward call).
GRPO_CLONES bool any_infinite(const float* values, int64_t n) {
  uint32_t infinite = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    infinite |= (bits & 0x7fffffffu) == 0x7f800000u;
  }
  return infinite != 0;
}

}  // namespace grpo::advantage_checks
