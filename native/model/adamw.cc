// Built with -fno-math-errno (CMakeLists.txt): the sqrtf of adamw_update is then the vector square root, correctly
// rounded like the scalar one. No contraction into FMAs: the update keeps the bits of the rule as written (the
// pragma comes before the includes so that the rule's inline function gets it too).
#pragma GCC optimize("fp-contract=off")

#include "adamw.h"

#include <algorithm>
#include <cmath>

#include "adamw_rule.h"
#include "runtime/error.h"
#include "runtime/simd.h"
#include "runtime/thread_pool.h"

namespace grpo::model {

namespace {

constexpr int64_t kGrain = 65536;

// Sum of squares per fixed block, combined in block order (same bits for any thread count).
double squared_norm(const std::vector<float>& g) {
  const int64_t n = static_cast<int64_t>(g.size());
  std::vector<double> partial(static_cast<size_t>(block_count(n, kGrain)));
  parallel_for(n, kGrain, [&](int64_t begin, int64_t end) {
    double s = 0.0;
    for (int64_t i = begin; i < end; ++i) s += static_cast<double>(g[i]) * g[i];
    partial[begin / kGrain] = s;
  });
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}

// adamw_update over [0, n), one clone per SIMD path.
GRPO_CLONES void update_span(const AdamwScalars& s, float decay, int64_t n, float* p, float* g, float* m, float* v) {
  for (int64_t i = 0; i < n; ++i) adamw_update(s, decay, p[i], g[i], m[i], v[i]);
}

}  // namespace

float adamw_step(Model& m, const grpo_adamw_options& o) {
  check_adamw_options(o);
  m.ensure_grads();
  if (m.adam_m.empty()) {
    m.adam_m.assign(m.params.size(), 0.0f);
    m.adam_v.assign(m.params.size(), 0.0f);
  }
  const double norm = std::sqrt(squared_norm(m.grads));
  const AdamwScalars scalars = adamw_scalars(o, norm, m.step + 1);
  ++m.step;
  for (const TensorSlot& slot : m.layout.slots) {
    const float decay = slot.matrix ? o.lr * o.weight_decay : 0.0f;
    float *p = m.params.data() + slot.offset, *g = m.grads.data() + slot.offset;
    float *mm = m.adam_m.data() + slot.offset, *vv = m.adam_v.data() + slot.offset;
    parallel_for(slot.size(), kGrain, [&](int64_t begin, int64_t end) {
      update_span(scalars, decay, end - begin, p + begin, g + begin, mm + begin, vv + begin);
    });
  }
  return static_cast<float>(norm);
}

}  // namespace grpo::model
