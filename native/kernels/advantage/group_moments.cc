#include "group_moments.h"

namespace grpo {

namespace {

// Partial sums of batch_stat: a serial sum over thousands of groups is one chain of dependent adds.
constexpr int kLanes = 8;

// Σ f(g) over groups [0, groups), lane l summing the groups g ≡ l (mod kLanes) in order.
template <typename Term>
GRPO_INLINE double lane_sum(int64_t groups, Term term) {
  double partial[kLanes] = {};
  const int64_t whole = groups - groups % kLanes;
  for (int64_t g = 0; g < whole; g += kLanes)
    for (int l = 0; l < kLanes; ++l) partial[l] += term(g + l);
  for (int64_t g = whole; g < groups; ++g) partial[g - whole] += term(g);
  double total = 0.0;
  for (int l = 0; l < kLanes; ++l) total += partial[l];
  return total;
}

// TRL's is_std_zero: torch.isclose(std, 0), NaN is not close; the std of one row (num_generations_eval
// = 1, or a batch of one in "batch" mode) is set to 0 (TRL grpo_trainer.py L2687-2699). Same rule in advantage.cu.
GRPO_INLINE bool zero_std_for_logging(double scale_std, int64_t rows) { return rows == 1 || std::fabs(scale_std) <= 1e-8; }

}  // namespace

GRPO_CLONES Stat batch_stat(const GroupMoments& m) {
  const int64_t groups = static_cast<int64_t>(m.sum.size());
  const double *sum = m.sum.data(), *valid = m.valid.data(), *group_mean = m.mean.data(), *squares = m.squares.data();
  const double total = lane_sum(groups, [&](int64_t g) { return sum[g]; });
  const double count = lane_sum(groups, [&](int64_t g) { return valid[g]; });
  const double mean = mean_of(total, count);
  const double deviations = lane_sum(groups, [&](int64_t g) {
    const double shift = group_mean[g] - mean;
    return pick(valid[g] > 0.0, squares[g] + valid[g] * shift * shift, 0.0);
  });
  return {mean, std_of(deviations, count), static_cast<int64_t>(count)};
}

GRPO_CLONES int64_t group_scales(const GroupMoments& m, int64_t first, int64_t count, int64_t size, const Stat& batch,
                                 int64_t n, const grpo_advantage_options& o, double* mean, double* inverse) {
  // The options in locals, the lanes branch-free: `o` may alias the arrays as far as the compiler knows.
  const bool batch_scale = o.scale == GRPO_ADV_SCALE_BATCH, unscaled = o.scale == GRPO_ADV_SCALE_NONE;
  const double epsilon = o.std_epsilon, batch_std = batch.std;
  const int64_t rows = batch_scale ? n : size;
  const double *valid = m.valid.data() + first, *group_mean = m.mean.data() + first, *squares = m.squares.data() + first;
  int64_t zero_std = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double scale_std = batch_scale ? batch_std : std_of(squares[i], valid[i]);
    zero_std += zero_std_for_logging(scale_std, rows) ? size : 0;
    mean[i] = group_mean[i];
    inverse[i] = pick(unscaled, 1.0, 1.0 / (scale_std + epsilon));
  }
  return zero_std;
}

}  // namespace grpo
