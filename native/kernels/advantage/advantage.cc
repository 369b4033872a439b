// Advantages: group / batch / rank-wise normalisation of rewards, and their scatter onto tokens.
// One normaliser serves every layout: a "group view" says which rewards form group g.
// Rewards are few (64K in one call costs tens of microseconds): contiguous groups are normalised in blocks of
// groups over the thread pool (group_lanes.h), other layouts serially; the batch statistics come from the
// groups' moments (group_moments.h), every sum in a fixed order, so the bits never depend on the threads.
#include "advantage_checks.h"
#include "grpo/advantage.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "group_index.h"
#include "group_lanes.h"
#include "group_moments.h"
#include "runtime/error.h"
#include "runtime/simd.h"
#include "runtime/thread_pool.h"

namespace grpo {

namespace {

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

// Writes the advantages of group g (mean, inverse as group_scales gives them).
template <typename Groups>
void write_group(const float* rewards, const Groups& groups, int64_t g, double mean, double inverse, bool normalised,
                 const grpo_advantage_options& o, float* out) {
  const double nan_value = nan_value_of(o.nan_rewards);
  for (int64_t j = 0; j < groups.size(g); ++j) {
    const int64_t i = groups.index(g, j);
    const double v = lane_value(rewards[i], nan_value);
    out[i] = static_cast<float>(pick(v == v, advantage_of(v, mean, inverse, normalised, singleton_advantage(v, o)), 0.0));
  }
}

// Scales and writes group g from its moments; returns its rows with a zero scaling std (logging).
template <typename Groups>
int64_t scale_group(const float* rewards, const Groups& groups, int64_t g, const GroupMoments& m, const Stat& batch,
                    int64_t n, const grpo_advantage_options& o, float* out) {
  double mean, inverse;
  const int64_t zero_std = group_scales(m, g, 1, groups.size(g), batch, n, o, &mean, &inverse);
  write_group(rewards, groups, g, mean, inverse, m.valid[g] >= 2.0, o, out);
  return zero_std;
}

// Whether the rewards of group g are all equal / all zero (NaN rewards ignored).
template <typename Groups>
void cell_flags(const float* rewards, const Groups& groups, int64_t g, int32_t nan_policy, bool* equal, bool* zero) {
  const double nan_value = nan_value_of(nan_policy);
  double first = kNaN;
  *equal = *zero = true;
  for (int64_t j = 0; j < groups.size(g); ++j) {
    const double v = lane_value(rewards[groups.index(g, j)], nan_value);
    if (std::isnan(v)) continue;
    if (std::isnan(first)) first = v;
    *equal = *equal && v == first;
    *zero = *zero && v == 0.0;
  }
}

// Whole blocks of kGroupLanes groups per task of lane_blocks (16 blocks: 8K rewards at G = 16).
constexpr int64_t kBlocksPerTask = 16;

// What lane_blocks does to each block: its moments, its advantages (from moments already in m), or both.
enum class Pass { kMoments, kAdvantages, kBoth };

// Runs `pass` over the whole blocks of contiguous groups in lanes; returns the rows with a zero scaling std
// (0 for kMoments). Each value depends on its group (and `batch`) alone and the counts are integers: the bits
// do not depend on which thread runs what.
int64_t lane_blocks(const float* rewards, int64_t n, const ContiguousGroups& groups, Pass pass, const Stat& batch,
                    const grpo_advantage_options& o, GroupMoments& m, float* out) {
  const int64_t size = groups.size_, blocks = groups.count() / kGroupLanes;
  std::vector<int64_t> zero_std(block_count(blocks, kBlocksPerTask), 0);  // [tasks]
  parallel_for(blocks, kBlocksPerTask, [&](int64_t begin, int64_t end) {
    std::vector<float> values(static_cast<size_t>(size * kGroupLanes)), scored(values.size());  // [size, kGroupLanes]
    std::vector<float> scratch(pass == Pass::kMoments ? 0 : values.size());                     // [size, kGroupLanes]
    for (int64_t b = begin; b < end; ++b) {
      const int64_t first = b * kGroupLanes;
      const bool all_scored = lane_values(rewards + first * size, size, o.nan_rewards, values.data(), scored.data());
      const float* counted = all_scored ? nullptr : scored.data();
      if (pass != Pass::kAdvantages) lane_moments(values.data(), counted, size, m, first, kGroupLanes);
      if (pass == Pass::kMoments) continue;
      double mean[kGroupLanes], inverse[kGroupLanes];
      zero_std[begin / kBlocksPerTask] += group_scales(m, first, kGroupLanes, size, batch, n, o, mean, inverse);
      lane_advantages(values.data(), counted, size, mean, inverse, m.valid.data() + first, o, scratch.data(),
                      out + first * size);
    }
  });
  int64_t total = 0;
  for (int64_t count : zero_std) total += count;
  return total;
}

// normalize() for contiguous groups: whole blocks of kGroupLanes groups in lanes over the thread pool, the
// rest group by group; under batch scaling the moments of every group come first.
void normalize_contiguous(const float* rewards, int64_t n, const ContiguousGroups& groups, const grpo_advantage_options& o,
                          float* out, grpo_advantage_stats* stats) {
  GroupMoments m(groups.count());
  const int64_t tail = groups.count() - groups.count() % kGroupLanes;
  for (int64_t g = tail; g < groups.count(); ++g) group_moments(rewards, groups, g, o.nan_rewards, m);
  const Stat no_batch{kNaN, kNaN, 0};  // what the group scales read without batch scaling
  int64_t zero_std = 0;
  Stat batch = no_batch;
  if (o.scale == GRPO_ADV_SCALE_BATCH) {
    lane_blocks(rewards, n, groups, Pass::kMoments, no_batch, o, m, out);
    batch = batch_stat(m);
    zero_std += lane_blocks(rewards, n, groups, Pass::kAdvantages, batch, o, m, out);
  } else {
    zero_std += lane_blocks(rewards, n, groups, Pass::kBoth, no_batch, o, m, out);
    batch = batch_stat(m);
  }
  for (int64_t g = tail; g < groups.count(); ++g) zero_std += scale_group(rewards, groups, g, m, batch, n, o, out);
  const double no_cells = groups.count() > 0 ? 0.0 : kNaN;  // as normalize() without cells
  if (stats) *stats = {batch.mean, batch.std, n > 0 ? static_cast<double>(zero_std) / n : kNaN, no_cells, no_cells};
}

// cells: also count the groups whose rewards are all equal / all zero (rank-wise stats).
template <typename Groups>
void normalize(const float* rewards, int64_t n, const Groups& groups, const grpo_advantage_options& o, bool cells,
               float* out, grpo_advantage_stats* stats) {
  GroupMoments m(groups.count());
  for (int64_t g = 0; g < groups.count(); ++g) group_moments(rewards, groups, g, o.nan_rewards, m);
  const Stat batch = batch_stat(m);
  int64_t zero_std = 0, cells_equal = 0, cells_zero = 0;
  for (int64_t g = 0; g < groups.count(); ++g) {
    zero_std += scale_group(rewards, groups, g, m, batch, n, o, out);
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
