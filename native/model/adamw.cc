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

// One step over the tensors of `layout` in params / grads (moments allocated on the first step); the clipping norm.
float step_buffers(const Layout& layout, std::vector<float>& params, std::vector<float>& grads, std::vector<float>& adam_m,
                   std::vector<float>& adam_v, int64_t& step, const grpo_adamw_options& o) {
  if (adam_m.empty()) {
    adam_m.assign(params.size(), 0.0f);
    adam_v.assign(params.size(), 0.0f);
  }
  const double norm = std::sqrt(squared_norm(grads));
  const AdamwScalars scalars = adamw_scalars(o, norm, step + 1);
  ++step;
  for (const TensorSlot& slot : layout.slots) {
    const float decay = slot.matrix ? o.lr * o.weight_decay : 0.0f;
    float *p = params.data() + slot.offset, *g = grads.data() + slot.offset;
    float *mm = adam_m.data() + slot.offset, *vv = adam_v.data() + slot.offset;
    parallel_for(slot.size(), kGrain, [&](int64_t begin, int64_t end) {
      update_span(scalars, decay, end - begin, p + begin, g + begin, mm + begin, vv + begin);
    });
  }
  return static_cast<float>(norm);
}

}  // namespace

float adamw_step(Model& m, const grpo_adamw_options& o) {
  check_adamw_options(o);
  if (m.lora) {
    Lora& l = *m.lora;
    l.forwards = 0;
    return step_buffers(l.layout, l.params, l.grads, l.adam_m, l.adam_v, m.step, o);
  }
  m.ensure_grads();
  return step_buffers(m.layout, m.params, m.grads, m.adam_m, m.adam_v, m.step, o);
}

}  // namespace grpo::model
