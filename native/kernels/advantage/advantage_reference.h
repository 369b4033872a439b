// Plain double-precision reference of the group normalisation (native/kernels/advantage/advantage.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "grpo/advantage.h"

namespace grpo::reference {

// groups: the member indices of each group. out [n] receives the advantages.
void normalize_groups(const float* rewards, int64_t n, const std::vector<std::vector<int64_t>>& groups,
                      const grpo_advantage_options& options, double* out);

}  // namespace grpo::reference
