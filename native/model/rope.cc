#include "rope.h"

#include <algorithm>
#include <cmath>

#include "runtime/simd.h"
#include "runtime/thread_pool.h"
#include "vec.h"

namespace grpo::model {

RopeTable make_rope(int64_t head_dim, float theta) {
  RopeTable r;
  r.half = head_dim / 2;
  for (int64_t i = 0; i < r.half; ++i)
    r.inv_freq.push_back(static_cast<float>(1.0 / std::pow(static_cast<double>(theta), (2.0 * i) / head_dim)));
  return r;
}

namespace {

// Rows [begin, end) of x rotated by the angles of table row row_of[t]: cos, sin [rows, half] each.
GRPO_CLONES GRPO_NO_CONTRACTION void rotate_rows(const float* cos_t, const float* sin_t, const int64_t* row_of,
                                                 int64_t begin, int64_t end, int64_t heads, int64_t half, float sign,
                                                 float* x) {
  for (int64_t t = begin; t < end; ++t) {
    const float *c = cos_t + row_of[t] * half, *s = sin_t + row_of[t] * half;
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + (t * heads + h) * 2 * half;
      for (int64_t i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half], sn = sign * s[i];
        v[i] = a * c[i] - b * sn;
        v[i + half] = b * c[i] + a * sn;
      }
    }
  }
}

}  // namespace

// cos and sin (libm) once per distinct angle: per position when positions repeat (a packed batch: T tokens over
// positions 0 .. max), else per token.
void rope_apply(const RopeTable& rope, float* x, const int64_t* positions, int64_t T, int64_t heads, bool inverse) {
  if (T == 0) return;
  const int64_t half = rope.half, max_pos = *std::max_element(positions, positions + T);
  const bool by_position = max_pos < T;
  const int64_t rows = by_position ? max_pos + 1 : T;
  std::vector<float> cos_t(static_cast<size_t>(rows * half)), sin_t(cos_t.size());
  std::vector<int64_t> row_of(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) row_of[t] = by_position ? positions[t] : t;
  parallel_for(rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t i = 0; i < half; ++i) {
        const float angle = static_cast<float>(by_position ? r : positions[r]) * rope.inv_freq[i];  // float32, as in HF
        cos_t[r * half + i] = std::cos(angle);
        sin_t[r * half + i] = std::sin(angle);
      }
  });
  parallel_for(T, 16, [&](int64_t begin, int64_t end) {
    rotate_rows(cos_t.data(), sin_t.data(), row_of.data(), begin, end, heads, half, inverse ? -1.0f : 1.0f, x);
  });
}

}  // namespace grpo::model
