// The AVX-512 row of the policy loss: loss_lanes.h's block on vectors of kWideLanes floats, the whole
// file compiled for x86-64-v4 (see loss_lanes.h for why a pragma rather than a function attribute).
// Called only where simd::avx512_path() holds.
#include <cstdint>
#include <cstring>
#include <limits>

#include "runtime/simd.h"

#if GRPO_HAS_AVX512_CODE
#pragma GCC target("arch=x86-64-v4")
#include "loss_lanes.h"

namespace grpo::loss_lanes {

void row_lanes_avx512(const Row r, const Scalars s, Level level, Lanes& out) {
  Sums acc = empty_sums();
  if (level == Level::kTokenPlain) wide_row<Level::kTokenPlain>(r, s, acc);
  else if (level == Level::kToken) wide_row<Level::kToken>(r, s, acc);
  else if (level == Level::kSequenceToken) wide_row<Level::kSequenceToken>(r, s, acc);
  else wide_row<Level::kBins>(r, s, acc);
  write_lanes(acc, out);
}

}  // namespace grpo::loss_lanes
#endif
