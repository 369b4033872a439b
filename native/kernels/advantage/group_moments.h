// The statistics of group normalisation, shared by every group layout: each group's moments (sum, count,
// squared deviations from its own mean, summed serially in member order: the bits of the CUDA kernel's
// per-group loop), the factors that turn a reward into an advantage, and the whole batch's mean and std
// combined from the groups' moments (the groups partition the batch, so no extra pass over the rewards).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "grpo/advantage.h"
#include "runtime/simd.h"

namespace grpo {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// cond ? a : b on the bits: GCC's PRE turns a double select that feeds arithmetic into a branch, and the
// branch stops the vectoriser (docs/performance.md).
GRPO_INLINE double pick(bool cond, double a, double b) {
  uint64_t x, y;
  std::memcpy(&x, &a, sizeof x), std::memcpy(&y, &b, sizeof y);
  const uint64_t keep = 0 - static_cast<uint64_t>(cond), bits = (x & keep) | (y & ~keep);
  double out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// What an unscorable (NaN) reward counts as: excluded (NaN) or 0.
inline double nan_value_of(int32_t nan_policy) { return nan_policy == GRPO_ADV_NAN_AS_ZERO ? 0.0 : kNaN; }

// A reward as the statistics see it, branch-free: NaN as `nan_value`.
GRPO_INLINE double lane_value(float r, double nan_value) { return pick(r == r, static_cast<double>(r), nan_value); }

// The moments of groups [0, groups), one array per field.
struct GroupMoments {
  explicit GroupMoments(int64_t groups) : sum(groups), valid(groups), mean(groups), squares(groups) {}
  std::vector<double> sum, valid, mean, squares;  // [groups] each: Σ v, #scored, Σ v / #scored, Σ (v − mean)²
};

struct Stat {
  double mean, std;
  int64_t valid;
};

GRPO_INLINE double mean_of(double sum, double valid) { return pick(valid > 0.0, sum / valid, kNaN); }

// The unbiased std, NaN below 2 scored values.
GRPO_INLINE double std_of(double squares, double valid) { return pick(valid >= 2.0, std::sqrt(squares / (valid - 1.0)), kNaN); }

// Serial two-pass moments of the members of group g (Groups: count(), size(g), index(g, j)).
template <typename Groups>
void group_moments(const float* rewards, const Groups& groups, int64_t g, int32_t nan_policy, GroupMoments& m) {
  const double nan_value = nan_value_of(nan_policy);
  double sum = 0.0, valid = 0.0, squares = 0.0;
  for (int64_t j = 0; j < groups.size(g); ++j) {
    const double v = lane_value(rewards[groups.index(g, j)], nan_value);
    sum += pick(v == v, v, 0.0), valid += pick(v == v, 1.0, 0.0);
  }
  const double mean = mean_of(sum, valid);
  for (int64_t j = 0; j < groups.size(g); ++j) {
    const double v = lane_value(rewards[groups.index(g, j)], nan_value);
    squares += pick(v == v, (v - mean) * (v - mean), 0.0);
  }
  m.sum[g] = sum, m.valid[g] = valid, m.mean[g] = mean, m.squares[g] = squares;
}

// The whole batch's statistics: Σ(v − m)² = Σ_g [Σ_g(v − m_g)² + n_g (m_g − m)²], the group terms summed in
// lanes of a fixed layout over the group index (never the threads).
Stat batch_stat(const GroupMoments& m);

// (v − mean) · inverse, 0 where that is not finite (nan_to_num: a batch std of NaN gives 0).
GRPO_INLINE double scaled_advantage(double v, double mean, double inverse) {
  const double a = (v - mean) * inverse;
  return pick(a - a == 0.0, a, 0.0);
}

// The advantage of one scored reward v of a group with this mean, 1 / (std + eps) (1 unscaled) and
// `normalised` (at least 2 scored rewards); `single` is what a lone scored reward gets. An unscorable
// completion gets 0 (the callers' select).
GRPO_INLINE double advantage_of(double v, double mean, double inverse, bool normalised, double single) {
  return pick(normalised, scaled_advantage(v, mean, inverse), single);
}

// A lone scored reward's advantage under the singleton policy (advantage_of's `single`).
GRPO_INLINE double singleton_advantage(double v, const grpo_advantage_options& o) {
  const double fixed = o.singleton == GRPO_ADV_SINGLETON_NAN ? kNaN : 0.0;
  const double divisor = o.scale == GRPO_ADV_SCALE_NONE ? 1.0 : 1.0 + o.std_epsilon;
  return o.singleton == GRPO_ADV_SINGLETON_RAW ? v / divisor : fixed;
}

// The factors of groups [first, first + count) of `size` rewards (every group that size, or count 1):
// mean[i] and inverse[i] for group first + i. Returns the rows whose scaling std is zero (logging).
int64_t group_scales(const GroupMoments& m, int64_t first, int64_t count, int64_t size, const Stat& batch, int64_t n,
                     const grpo_advantage_options& o, double* mean, double* inverse);

}  // namespace grpo
