// Rows with arbitrary group ids (verl uid) sorted by group with a counting sort, shared by the CPU
// kernels and the CUDA backend (which uploads the result): group g is order[offsets[g] .. offsets[g+1]).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/error.h"

namespace grpo {

struct GroupIndex {
  std::vector<int64_t> offsets;  // [num_groups + 1]
  std::vector<int64_t> order;    // [n]: row indices, group by group, ascending within a group
};

inline GroupIndex index_groups(const int32_t* ids, int64_t n, int64_t num_groups) {
  GroupIndex groups{std::vector<int64_t>(num_groups + 1, 0), std::vector<int64_t>(n)};
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= num_groups)
      fail(GRPO_ERR_INDEX_RANGE, "group_ids[%lld] = %d is outside [0, %lld)", static_cast<long long>(i), ids[i],
           static_cast<long long>(num_groups));
    ++groups.offsets[ids[i] + 1];
  }
  for (int64_t g = 0; g < num_groups; ++g) groups.offsets[g + 1] += groups.offsets[g];
  std::vector<int64_t> next(groups.offsets.begin(), groups.offsets.end() - 1);
  for (int64_t i = 0; i < n; ++i) groups.order[next[ids[i]]++] = i;
  return groups;
}

}  // namespace grpo
