#include "rope.h"

#include <cmath>

#include "runtime/thread_pool.h"

namespace grpo::model {

RopeTable make_rope(int64_t head_dim, float theta) {
  RopeTable r;
  r.half = head_dim / 2;
  for (int64_t i = 0; i < r.half; ++i)
    r.inv_freq.push_back(static_cast<float>(1.0 / std::pow(static_cast<double>(theta), (2.0 * i) / head_dim)));
  return r;
}

void rope_apply(const RopeTable& rope, float* x, const int64_t* positions, int64_t T, int64_t heads, bool inverse) {
  const int64_t half = rope.half, dim = 2 * half;
  parallel_for(T, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> cos_t(half), sin_t(half);
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t i = 0; i < half; ++i) {
        const float angle = static_cast<float>(positions[t]) * rope.inv_freq[i];  // float32, as in HF
        cos_t[i] = std::cos(angle);
        sin_t[i] = inverse ? -std::sin(angle) : std::sin(angle);
      }
      for (int64_t h = 0; h < heads; ++h) {
        float* v = x + (t * heads + h) * dim;
        for (int64_t i = 0; i < half; ++i) {
          const float a = v[i], b = v[i + half];
          v[i] = a * cos_t[i] - b * sin_t[i];
          v[i + half] = b * cos_t[i] + a * sin_t[i];
        }
      }
    }
  });
}

}  // namespace grpo::model
