// Advantages: group / batch / rank-wise normalisation of rewards, and their scatter onto tokens.
// One normaliser serves every layout: a "group view" says which rewards form group g.
// Rewards are few (64K in one call costs tens of microseconds), so normalisation is serial
// and trivially deterministic; the token scatters run over rows in parallel.
#include "advantage_checks.h"
#include "grpo/advantage.h"

#include <cmath>
#include <limits>
#include <vector>

#include "group_index.h"
#include "runtime/error.h"
#include "runtime/thread_pool.h"

namespace grpo {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Group g is the run [g·size, (g+1)·size) (TRL's view(-1, G)).
struct ContiguousGroups {
  int64_t groups, size_;
  int64_t count() const { return groups; }
  int64_t size(int64_t) const { return size_; }
  int64_t index(int64_t g, int64_t j) const { return g * size_ + j; }
};

// rewards [groups, candidates, ranks]: cell c = (g, k) holds the candidates of group g at rank k.
struct RankCells {
  int64_t groups, candidates, ranks;
  int64_t count() const { return groups * ranks; }
  int64_t size(int64_t) const { return candidates; }
  int64_t index(int64_t c, int64_t j) const { return (c / ranks) * candidates * ranks + j * ranks + c % ranks; }
};

// Arbitrary group ids (verl uid), sorted by group (group_index.h).
struct IndexedGroups {
  GroupIndex groups;
  int64_t count() const { return static_cast<int64_t>(groups.offsets.size()) - 1; }
  int64_t size(int64_t g) const { return groups.offsets[g + 1] - groups.offsets[g]; }
  int64_t index(int64_t g, int64_t j) const { return groups.order[groups.offsets[g] + j]; }
};

struct Stat {
  double mean, std;
  int64_t valid;
};

// A reward as the statistics see it: NaN (excluded) or a number.
double reward_value(float r, int32_t nan_policy) {
  const double zero_or_nan = nan_policy == GRPO_ADV_NAN_AS_ZERO ? 0.0 : kNaN;
  return r != r ? zero_or_nan : static_cast<double>(r);
}

// Two-pass mean and unbiased std of the non-NaN values of one group (std NaN below 2 values).
template <typename Groups>
Stat group_stat(const float* rewards, const Groups& groups, int64_t g, int32_t nan_policy) {
  double sum = 0.0;
  int64_t valid = 0;
  for (int64_t j = 0; j < groups.size(g); ++j) {
    const double v = reward_value(rewards[groups.index(g, j)], nan_policy);
    const bool scored = v == v;
    sum += scored ? v : 0.0, valid += scored;
  }
  const double mean = valid ? sum / valid : kNaN;
  double squares = 0.0;
  for (int64_t j = 0; j < groups.size(g); ++j) {
    const double v = reward_value(rewards[groups.index(g, j)], nan_policy);
    squares += v == v ? (v - mean) * (v - mean) : 0.0;
  }
  return {mean, valid >= 2 ? std::sqrt(squares / (valid - 1)) : kNaN, valid};
}

double singleton_advantage(double v, const grpo_advantage_options& o) {
  if (o.singleton == GRPO_ADV_SINGLETON_ZERO) return 0.0;
  if (o.singleton == GRPO_ADV_SINGLETON_NAN) return kNaN;
  return o.scale == GRPO_ADV_SCALE_NONE ? v : v / (1.0 + o.std_epsilon);
}

// Writes the advantages of group g; `inverse` = 1 / (std + eps), or 1 without scaling.
template <typename Groups>
void write_group(const float* rewards, const Groups& groups, int64_t g, const Stat& group, double inverse,
                 const grpo_advantage_options& o, float* out) {
  for (int64_t j = 0; j < groups.size(g); ++j) {
    const int64_t i = groups.index(g, j);
    const double v = reward_value(rewards[i], o.nan_rewards);
    const double a = (v - group.mean) * inverse;
    const double scaled = a - a == 0.0 ? a : 0.0;  // nan_to_num: a batch std of NaN gives 0
    const double value = group.valid < 2 ? singleton_advantage(v, o) : scaled;
    out[i] = static_cast<float>(v == v ? value : 0.0);  // an unscorable completion gets 0
  }
}

// Whether the rewards of group g are all equal / all zero (NaN rewards ignored).
template <typename Groups>
void cell_flags(const float* rewards, const Groups& groups, int64_t g, int32_t nan_policy, bool* equal, bool* zero) {
  double first = kNaN;
  *equal = *zero = true;
  for (int64_t j = 0; j < groups.size(g); ++j) {
    const double v = reward_value(rewards[groups.index(g, j)], nan_policy);
    if (std::isnan(v)) continue;
    if (std::isnan(first)) first = v;
    *equal = *equal && v == first;
    *zero = *zero && v == 0.0;
  }
}

// TRL's is_std_zero: torch.isclose(std, 0), NaN is not close; the std of one row (num_generations_eval
// = 1, or a batch of one in "batch" mode) is set to 0 (TRL grpo_trainer.py L2687-2699). Same rule in advantage.cu.
bool zero_std_for_logging(double scale_std, int64_t rows) { return rows == 1 || std::fabs(scale_std) <= 1e-8; }

// cells: also count the groups whose rewards are all equal / all zero (rank-wise stats).
template <typename Groups>
void normalize(const float* rewards, int64_t n, const Groups& groups, const grpo_advantage_options& o, bool cells,
               float* out, grpo_advantage_stats* stats) {
  const ContiguousGroups whole{1, n};
  const Stat batch = group_stat(rewards, whole, 0, o.nan_rewards);
  int64_t zero_std = 0, cells_equal = 0, cells_zero = 0;
  for (int64_t g = 0; g < groups.count(); ++g) {
    const Stat group = group_stat(rewards, groups, g, o.nan_rewards);
    const double scale_std = o.scale == GRPO_ADV_SCALE_BATCH ? batch.std : group.std;
    const int64_t rows = o.scale == GRPO_ADV_SCALE_BATCH ? n : groups.size(g);
    if (zero_std_for_logging(scale_std, rows)) zero_std += groups.size(g);
    const double inverse = o.scale == GRPO_ADV_SCALE_NONE ? 1.0 : 1.0 / (scale_std + o.std_epsilon);
    write_group(rewards, groups, g, group, inverse, o, out);
    if (!cells) continue;
    bool equal, zero;
    cell_flags(rewards, groups, g, o.nan_rewards, &equal, &zero);
    cells_equal += equal, cells_zero += zero;
  }
  if (!stats) return;
  const double cell_count = groups.count() > 0 ? static_cast<double>(groups.count()) : kNaN;
  *stats = {batch.mean, batch.std, n > 0 ? static_cast<double>(zero_std) / n : kNaN, cells_equal / cell_count,
            cells_zero / cell_count};
}

}  // namespace

void group_advantages(const float* rewards, int64_t n, int64_t group_size, const int32_t* group_ids, int64_t num_groups,
                      const grpo_advantage_options& o, float* out, grpo_advantage_stats* stats) {
  if (group_ids) {
    const IndexedGroups indexed{index_groups(group_ids, n, num_groups)};
    return normalize(rewards, n, indexed, o, false, out, stats);
  }
  normalize(rewards, n, ContiguousGroups{n / group_size, group_size}, o, false, out, stats);
}

}  // namespace grpo

extern "C" grpo_status grpo_group_advantages(const float* rewards, int64_t n, int64_t group_size, const int32_t* group_ids,
                                             int64_t num_groups, const grpo_advantage_options* options, float* advantages,
                                             grpo_advantage_stats* stats) {
  return grpo::guarded([&] {
    grpo::advantage_checks::group_call(rewards, n, group_size, group_ids, num_groups, options, advantages);
    grpo::group_advantages(rewards, n, group_size, group_ids, num_groups, *options, advantages, stats);
  });
}

extern "C" grpo_status grpo_rank_advantages(const float* rewards, int64_t groups, int64_t candidates, int64_t ranks,
                                            const grpo_advantage_options* options, float* advantages,
                                            grpo_advantage_stats* stats) {
  return grpo::guarded([&] {
    const int64_t n = grpo::advantage_checks::rank_call(rewards, groups, candidates, ranks, options, advantages);
    grpo::normalize(rewards, n, grpo::RankCells{groups, candidates, ranks}, *options, true, advantages, stats);
  });
}
