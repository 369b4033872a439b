// Contiguous groups normalised side by side, one group per lane: a block of kGroupLanes groups of `size`
// rewards is transposed into [size, kGroupLanes], so that each group's sums run in group_moments'
// serial order (the same bits as the group-by-group path) while the lanes vectorise, and the advantages
// are transposed back into the rewards' order.
#pragma once

#include <cstdint>

#include "group_moments.h"

namespace grpo {

// 4 vectors of AVX-512 doubles, 8 of AVX2: enough independent add chains to hide the add latency.
constexpr int kGroupLanes = 32;

// values [size, kGroupLanes] ← block [kGroupLanes, size]: reward j of lane l's group, 0 where it is NaN.
// Returns whether every reward counts (no NaN, or NaN counted as 0); otherwise scored [size, kGroupLanes]
// says which do (1 or 0).
bool lane_values(const float* block, int64_t size, int32_t nan_policy, float* values, float* scored);

// The moments of the first `lanes` (≤ kGroupLanes) groups in `values` into m at [first, first + lanes);
// scored NULL: every reward counts.
void lane_moments(const float* values, const float* scored, int64_t size, GroupMoments& m, int64_t first, int lanes);

// out [kGroupLanes, size] ← the advantages of `values` under the lanes' factors (group_scales);
// `scratch` [size, kGroupLanes] holds them in lane order before the transpose back.
void lane_advantages(const float* values, const float* scored, int64_t size, const double* mean, const double* inverse,
                     const double* valid, const grpo_advantage_options& o, float* scratch, float* out);

}  // namespace grpo
