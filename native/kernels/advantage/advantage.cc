// Advantages: group / batch / rank-wise normalisation of rewards, and their scatter onto tokens.
// One normaliser serves every layout: a "group view" says which rewards form group g.
// Rewards are few (64K in one call costs tens of microseconds): contiguous groups are normalised in blocks of
// groups over the thread pool beside the batch statistics, other layouts serially; every sum runs in lanes of a
// fixed layout, so the bits never depend on the threads. The token scatters run over rows in parallel.
#include "advantage_checks.h"
#include "grpo/advantage.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "group_index.h"
#include "runtime/error.h"
#include "runtime/simd.h"
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

// reward_value, branch-free: NaN as `nan_value` (0 or NaN).
GRPO_INLINE double lane_value(float r, double nan_value) { return pick(r == r, static_cast<double>(r), nan_value); }

double nan_value_of(int32_t nan_policy) { return nan_policy == GRPO_ADV_NAN_AS_ZERO ? 0.0 : kNaN; }

// The whole batch's mean and std (the `batch` of normalize) from kLanes partial sums per pass, their order
// fixed by the lane layout: a serial sum over 64K rewards is one chain of dependent adds (4 cycles each).
constexpr int kLanes = 8;

// Groups normalised side by side, one per lane (contiguous_block): each group's sums stay serial, so their
// number only sets how many independent add chains run at once (4 vectors of AVX-512 doubles).
constexpr int kGroupLanes = 32;

GRPO_CLONES Stat batch_stat(const float* rewards, int64_t n, int32_t nan_policy) {
  const double nan_value = nan_value_of(nan_policy);
  double sum[kLanes] = {}, count[kLanes] = {}, squares[kLanes] = {};
  const int64_t whole = n - n % kLanes;
  for (int64_t i = 0; i < whole; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const double v = lane_value(rewards[i + l], nan_value);
      sum[l] += pick(v == v, v, 0.0), count[l] += pick(v == v, 1.0, 0.0);
    }
  for (int64_t i = whole; i < n; ++i) {
    const double v = lane_value(rewards[i], nan_value);
    sum[i - whole] += pick(v == v, v, 0.0), count[i - whole] += pick(v == v, 1.0, 0.0);
  }
  double total = 0.0, valid = 0.0;
  for (int l = 0; l < kLanes; ++l) total += sum[l], valid += count[l];
  const double mean = valid > 0.0 ? total / valid : kNaN;
  for (int64_t i = 0; i < whole; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const double v = lane_value(rewards[i + l], nan_value);
      squares[l] += pick(v == v, (v - mean) * (v - mean), 0.0);
    }
  for (int64_t i = whole; i < n; ++i) {
    const double v = lane_value(rewards[i], nan_value);
    squares[i - whole] += pick(v == v, (v - mean) * (v - mean), 0.0);
  }
  double square_sum = 0.0;
  for (int l = 0; l < kLanes; ++l) square_sum += squares[l];
  return {mean, valid >= 2.0 ? std::sqrt(square_sum / (valid - 1.0)) : kNaN, static_cast<int64_t>(valid)};
}

// The advantages of contiguous_block's groups, as write_group writes them: group by group, straight from the
// rewards in their own order (each value depends on its reward and its group's statistics only), so the stores
// are contiguous and the lanes run along a group.
template <bool kRawSingleton>
GRPO_INLINE void write_lanes(const float* block, int64_t size, const double* mean, const double* inverse,
                             const double* valid, const grpo_advantage_options& o, float* out) {
  const double nan_value = nan_value_of(o.nan_rewards);
  const double fixed = o.singleton == GRPO_ADV_SINGLETON_NAN ? kNaN : 0.0;
  const double divisor = o.scale == GRPO_ADV_SCALE_NONE ? 1.0 : 1.0 + o.std_epsilon;
  for (int l = 0; l < kGroupLanes; ++l) {
    const double group_mean = mean[l], group_inverse = inverse[l];
    const bool singleton = valid[l] < 2.0;
    for (int64_t j = 0; j < size; ++j) {
      const double v = lane_value(block[l * size + j], nan_value);
      const double a = (v - group_mean) * group_inverse;
      const double scaled = pick(a - a == 0.0, a, 0.0);  // as write_group
      const double single = kRawSingleton ? v / divisor : fixed;
      const double value = pick(singleton, single, scaled);
      out[l * size + j] = static_cast<float>(pick(v == v, value, 0.0));
    }
  }
}

// What normalize() does for kGroupLanes contiguous groups [first, first + kGroupLanes) of `size` rewards, one group per
// lane: the block is transposed into `values` [size, kGroupLanes] so that each group's sums run in group_stat's
// serial order (the same bits) while the lanes vectorise. Returns the count of rows with a zero std (logging).
GRPO_CLONES int64_t contiguous_block(const float* rewards, int64_t first, int64_t size, const Stat& batch, int64_t n,
                                     const grpo_advantage_options& o, double* values, float* out) {
  const float* block = rewards + first * size;
  const double nan_value = nan_value_of(o.nan_rewards);
  for (int64_t j = 0; j < size; ++j)
    for (int l = 0; l < kGroupLanes; ++l) values[j * kGroupLanes + l] = lane_value(block[l * size + j], nan_value);
  double sum[kGroupLanes] = {}, valid[kGroupLanes] = {}, squares[kGroupLanes] = {}, mean[kGroupLanes], inverse[kGroupLanes];
  for (int64_t j = 0; j < size; ++j)
    for (int l = 0; l < kGroupLanes; ++l) {
      const double v = values[j * kGroupLanes + l];
      sum[l] += pick(v == v, v, 0.0), valid[l] += pick(v == v, 1.0, 0.0);
    }
  for (int l = 0; l < kGroupLanes; ++l) mean[l] = valid[l] > 0.0 ? sum[l] / valid[l] : kNaN;
  for (int64_t j = 0; j < size; ++j)
    for (int l = 0; l < kGroupLanes; ++l) {
      const double v = values[j * kGroupLanes + l];
      squares[l] += pick(v == v, (v - mean[l]) * (v - mean[l]), 0.0);
    }
  // The options in locals, the lanes branch-free: `o` may alias the arrays as far as the compiler knows, so it
  // reloaded them in every lane.
  const bool batch_scale = o.scale == GRPO_ADV_SCALE_BATCH, unscaled = o.scale == GRPO_ADV_SCALE_NONE;
  const double epsilon = o.std_epsilon, batch_std = batch.std;
  const int64_t rows = batch_scale ? n : size;
  int64_t zero_std = 0;
  for (int l = 0; l < kGroupLanes; ++l) {
    const double std = pick(valid[l] >= 2.0, std::sqrt(squares[l] / (valid[l] - 1.0)), kNaN);
    const double scale_std = batch_scale ? batch_std : std;
    zero_std += zero_std_for_logging(scale_std, rows) ? size : 0;
    inverse[l] = pick(unscaled, 1.0, 1.0 / (scale_std + epsilon));
  }
  // singleton_advantage without branches in the loop; its division only where the policy needs it
  if (o.singleton == GRPO_ADV_SINGLETON_RAW)
    write_lanes<true>(block, size, mean, inverse, valid, o, out + first * size);
  else
    write_lanes<false>(block, size, mean, inverse, valid, o, out + first * size);
  return zero_std;
}

// Whole blocks of kGroupLanes groups per task of normalize_contiguous (16 blocks: 8K rewards at G = 16).
constexpr int64_t kBlocksPerTask = 16;

// normalize() for contiguous groups: whole blocks of kGroupLanes groups in lanes, the rest group by group.
// Without batch scaling the blocks do not need the batch statistics, so task 0 computes them while the
// other tasks normalise blocks (each value depends on its group alone, the counts are integers: the bits
// do not depend on which thread runs what).
void normalize_contiguous(const float* rewards, int64_t n, const ContiguousGroups& groups, const grpo_advantage_options& o,
                          float* out, grpo_advantage_stats* stats) {
  const bool batch_first = o.scale == GRPO_ADV_SCALE_BATCH;
  Stat batch{kNaN, kNaN, 0};
  if (batch_first) batch = batch_stat(rewards, n, o.nan_rewards);
  const int64_t blocks = groups.count() / kGroupLanes, block_tasks = block_count(blocks, kBlocksPerTask);
  const int64_t first_task = batch_first ? 1 : 0;  // task 0: the batch statistics
  const Stat scale_batch = batch;  // what the blocks read (only under batch scaling), never written while they run
  std::vector<int64_t> zero_std(block_tasks + 1, 0);
  parallel_for(block_tasks + 1 - first_task, 1, [&](int64_t begin, int64_t) {
    const int64_t task = begin + first_task;
    if (task == 0) {
      batch = batch_stat(rewards, n, o.nan_rewards);
      return;
    }
    std::vector<double> values(static_cast<size_t>(groups.size_ * kGroupLanes));  // [size, kGroupLanes]
    const int64_t end = std::min(blocks, task * kBlocksPerTask);
    for (int64_t b = (task - 1) * kBlocksPerTask; b < end; ++b)
      zero_std[task] += contiguous_block(rewards, b * kGroupLanes, groups.size_, scale_batch, n, o, values.data(), out);
  });
  int64_t zero_std_total = 0;
  for (int64_t count : zero_std) zero_std_total += count;
  for (int64_t g = blocks * kGroupLanes; g < groups.count(); ++g) {
    const Stat group = group_stat(rewards, groups, g, o.nan_rewards);
    const double scale_std = o.scale == GRPO_ADV_SCALE_BATCH ? batch.std : group.std;
    if (zero_std_for_logging(scale_std, o.scale == GRPO_ADV_SCALE_BATCH ? n : groups.size_)) zero_std_total += groups.size_;
    write_group(rewards, groups, g, group, o.scale == GRPO_ADV_SCALE_NONE ? 1.0 : 1.0 / (scale_std + o.std_epsilon), o, out);
  }
  const double no_cells = groups.count() > 0 ? 0.0 : kNaN;  // as normalize() without cells
  if (stats) *stats = {batch.mean, batch.std, n > 0 ? static_cast<double>(zero_std_total) / n : kNaN, no_cells, no_cells};
}

// cells: also count the groups whose rewards are all equal / all zero (rank-wise stats).
template <typename Groups>
void normalize(const float* rewards, int64_t n, const Groups& groups, const grpo_advantage_options& o, bool cells,
               float* out, grpo_advantage_stats* stats) {
  const Stat batch = batch_stat(rewards, n, o.nan_rewards);
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
  normalize_contiguous(rewards, n, ContiguousGroups{n / group_size, group_size}, o, out, stats);
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
