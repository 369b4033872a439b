#include "rope.h"

#include <algorithm>
#include <cmath>

#include "runtime/simd.h"
#include "runtime/thread_pool.h"
#include "vec.h"

namespace grpo::model {

namespace {

// theta^(-2i/dim), i < dim/2: the unscaled frequencies.
std::vector<double> base_frequencies(int64_t dim, double theta) {
  std::vector<double> f(static_cast<size_t>(dim / 2));
  for (int64_t i = 0; i < dim / 2; ++i) f[i] = 1.0 / std::pow(theta, (2.0 * i) / dim);
  return f;
}

// Llama 3.1: wavelengths above original/low_freq_factor slow down by factor, those below
// original/high_freq_factor stay, and the band between blends the two.
void llama3_frequencies(const RopeScaling& s, std::vector<double>& f) {
  const double old_len = static_cast<double>(s.original_max_positions), pi = 3.14159265358979323846;
  const double low_wavelen = old_len / s.low_freq_factor, high_wavelen = old_len / s.high_freq_factor;
  for (double& x : f) {
    const double wavelen = 2 * pi / x;
    if (wavelen > low_wavelen) {
      x /= s.factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      x = (1 - smooth) * x / s.factor + smooth * x;
    }
  }
}

// The dimension at which a frequency completes `rotations` turns over the original context.
double correction_dim(double rotations, int64_t dim, double theta, double original) {
  const double pi = 3.14159265358979323846;
  return (static_cast<double>(dim) * std::log(original / (rotations * 2 * pi))) / (2 * std::log(theta));
}

// YaRN: interpolate (÷ factor) the dimensions below the correction range, extrapolate (keep) those above,
// ramp linearly across it.
void yarn_frequencies(const RopeScaling& s, int64_t dim, double theta, std::vector<double>& f) {
  const double original = static_cast<double>(s.original_max_positions);
  double low = correction_dim(s.beta_fast, dim, theta, original), high = correction_dim(s.beta_slow, dim, theta, original);
  if (s.truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0), high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;  // as transformers does, against a zero-width ramp
  for (size_t i = 0; i < f.size(); ++i) {
    const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0), keep = 1 - ramp;
    f[i] = (f[i] / s.factor) * (1 - keep) + f[i] * keep;
  }
}

double yarn_mscale(double factor, double mscale) { return factor <= 1 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0; }

double yarn_attention_factor(const RopeScaling& s) {
  if (s.attention_factor > 0) return s.attention_factor;
  if (s.mscale > 0 && s.mscale_all_dim > 0) return yarn_mscale(s.factor, s.mscale) / yarn_mscale(s.factor, s.mscale_all_dim);
  return yarn_mscale(s.factor, 1.0);
}

}  // namespace

RopeTable make_rope(const Config& c) {
  const RopeScaling& s = c.rope_scaling;
  std::vector<double> f = base_frequencies(c.head_dim, c.rope_theta);
  RopeTable r;
  r.half = c.head_dim / 2;
  if (s.type == GRPO_ROPE_LINEAR) {
    for (double& x : f) x /= s.factor;
  } else if (s.type == GRPO_ROPE_LLAMA3) {
    llama3_frequencies(s, f);
  } else if (s.type == GRPO_ROPE_YARN) {
    yarn_frequencies(s, c.head_dim, c.rope_theta, f);
    r.attention_factor = static_cast<float>(yarn_attention_factor(s));
  }
  for (double x : f) r.inv_freq.push_back(static_cast<float>(x));
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
        cos_t[r * half + i] = rope.attention_factor * std::cos(angle);  // YaRN's factor; the backward scales too
        sin_t[r * half + i] = rope.attention_factor * std::sin(angle);
      }
  });
  parallel_for(T, 16, [&](int64_t begin, int64_t end) {
    rotate_rows(cos_t.data(), sin_t.data(), row_of.data(), begin, end, heads, half, inverse ? -1.0f : 1.0f, x);
  });
}

}  // namespace grpo::model
