#include "sampling_penalties.h"

#include <algorithm>
#include <cmath>

namespace grpo::sampling {

bool apply_penalties(float* y, const int32_t* history, int64_t length, const Penalties& p, std::vector<int32_t>& ids,
                     int32_t* bad_id) {
  ids.assign(history, history + length);
  std::sort(ids.begin(), ids.end());  // the history (a few hundred ids), never the vocabulary
  for (size_t begin = 0, end; begin < ids.size(); begin = end) {
    end = begin + 1;
    while (end < ids.size() && ids[end] == ids[begin]) ++end;
    float& logit = y[ids[begin]];
    if (logit == -INFINITY) continue;
    logit = penalise(logit, static_cast<int64_t>(end - begin), p);
    if (!(logit < INFINITY)) {
      *bad_id = ids[begin];
      return false;
    }
  }
  return true;
}

}  // namespace grpo::sampling
