// Advantage kernels against the double-precision reference: contiguous, indexed and rank-wise
// groups with NaN rewards and singletons under every policy; token scatter on TV10.
#include <cmath>
#include <cstring>
#include <vector>

#include "advantage_reference.h"
#include "check.h"
#include "grpo/advantage.h"

using grpo::test::close;

namespace {

// close() after checking that NaN advantages (singleton policy "nan") sit at the same places.
void close_nan(const char* what, std::vector<float> fast, std::vector<double> ref) {
  for (size_t i = 0; i < fast.size(); ++i) {
    CHECK(std::isnan(fast[i]) == std::isnan(ref[i]));
    if (std::isnan(fast[i]) || std::isnan(ref[i])) fast[i] = 0.0f, ref[i] = 0.0;
  }
  close(what, fast.data(), ref.data(), fast.size(), 1e-5, 1e-5);
}

std::vector<float> rewards_with_nan(int64_t n, uint32_t seed, bool with_nan = true) {
  std::vector<float> r = grpo::test::random_floats(n, 1.0f, seed);
  for (int64_t i = 0; i < n && with_nan; i += 7) r[i] = NAN;
  for (int64_t i = 3; i < n; i += 11) r[i] = 1.0f;
  return r;
}

void contiguous_matches_reference(int64_t n, int64_t size, const grpo_advantage_options& o, bool with_nan = true) {
  const std::vector<float> r = rewards_with_nan(n, 21, with_nan);
  std::vector<std::vector<int64_t>> groups(n / size);
  for (int64_t i = 0; i < n; ++i) groups[i / size].push_back(i);
  std::vector<float> fast(n);
  std::vector<double> ref(n);
  grpo_advantage_stats stats{};
  CHECK(grpo_group_advantages(r.data(), n, size, nullptr, 0, &o, fast.data(), &stats) == GRPO_OK);
  grpo::reference::normalize_groups(r.data(), n, groups, o, ref.data());
  close_nan("contiguous", fast, ref);
  // The lanes of whole 32-group blocks give the bits of the group-by-group path (group ids i / size).
  std::vector<int32_t> ids(n);
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>(i / size);
  std::vector<float> by_group(n);
  grpo_advantage_stats group_stats{};
  CHECK(grpo_group_advantages(r.data(), n, 0, ids.data(), n / size, &o, by_group.data(), &group_stats) == GRPO_OK);
  CHECK(std::memcmp(fast.data(), by_group.data(), n * sizeof(float)) == 0);
  CHECK(stats.reward_mean == group_stats.reward_mean && stats.frac_zero_std == group_stats.frac_zero_std);
  CHECK(std::memcmp(&stats.reward_std, &group_stats.reward_std, sizeof(double)) == 0);
}

void indexed_matches_reference(int64_t n, int64_t num_groups, const grpo_advantage_options& o) {
  const std::vector<float> r = rewards_with_nan(n, 22);
  std::vector<int32_t> ids(n);
  std::vector<std::vector<int64_t>> groups(num_groups);
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>((i * 7919) % num_groups), groups[ids[i]].push_back(i);
  std::vector<float> fast(n);
  std::vector<double> ref(n);
  CHECK(grpo_group_advantages(r.data(), n, 0, ids.data(), num_groups, &o, fast.data(), nullptr) == GRPO_OK);
  grpo::reference::normalize_groups(r.data(), n, groups, o, ref.data());
  close_nan("indexed", fast, ref);
}

void rank_matches_reference(int64_t groups, int64_t candidates, int64_t ranks, const grpo_advantage_options& o) {
  const int64_t n = groups * candidates * ranks;
  const std::vector<float> r = rewards_with_nan(n, 23);
  std::vector<std::vector<int64_t>> cells;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t k = 0; k < ranks; ++k) {
      cells.emplace_back();
      for (int64_t s = 0; s < candidates; ++s) cells.back().push_back((g * candidates + s) * ranks + k);
    }
  std::vector<float> fast(n);
  std::vector<double> ref(n);
  CHECK(grpo_rank_advantages(r.data(), groups, candidates, ranks, &o, fast.data(), nullptr) == GRPO_OK);
  grpo::reference::normalize_groups(r.data(), n, cells, o, ref.data());
  close_nan("rank", fast, ref);
}

void scatter_tv10() {
  const float a[] = {0.8658754f, -0.4999f, 0.4999f, -0.8658754f, -0.4999f, 0.4999f,
                     0.8658754f, 1.4997001f, 0.4999f, -0.8658754f, -0.4999f, -1.4997001f};
  const int32_t seg[] = {0, 0, 1, 1, 2, 2, -1, -1, 0, 0, 1, 1, -1, -1, -1, -1, 0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3};
  const uint8_t mask[] = {1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const int32_t eos[] = {5, 3, 7, -1};
  const double expected[] = {0.8658754, 0.8658754, -0.4999, -0.4999, 0.4999, 0.1, 0, 0,
                             -0.8658754, -0.8658754, -0.4999, -0.1, 0, 0, 0, 0,
                             0.8658754, 0.8658754, 1.4997001, 1.4997001, 0.4999, 0.4999, -0.1, -0.1,
                             -0.8658754, -0.8658754, -0.4999, -0.4999, -1.4997001, -1.4997001, -0.1, -0.1};
  const grpo_length_shaping shaping{1, 0.1f, -0.1f, -0.1f};
  float out[32];
  CHECK(grpo_scatter_item_advantages(a, seg, mask, eos, 4, 8, 3, &shaping, out) == GRPO_OK);
  close("TV10", out, expected, 32, 1e-6, 1e-5);
}

void bad_input() {
  const float r[] = {1, 2, 3};
  float out[3];
  const grpo_advantage_options o{GRPO_ADV_SCALE_GROUP, GRPO_ADV_SINGLETON_ZERO, GRPO_ADV_NAN_EXCLUDE, 1e-4};
  const int32_t ids[] = {0, 5, 1};
  CHECK(grpo_group_advantages(r, 3, 2, nullptr, 0, &o, out, nullptr) == GRPO_ERR_SHAPE);
  CHECK(grpo_group_advantages(r, 3, 0, ids, 2, &o, out, nullptr) == GRPO_ERR_INDEX_RANGE);
  const grpo_advantage_options bad{7, 0, 0, 1e-4};
  CHECK(grpo_group_advantages(r, 3, 3, nullptr, 0, &bad, out, nullptr) == GRPO_ERR_INVALID_ARGUMENT);
  const float inf[] = {1, INFINITY, 0};
  CHECK(grpo_group_advantages(inf, 3, 3, nullptr, 0, &o, out, nullptr) == GRPO_ERR_NON_FINITE);
}

}  // namespace

int main() {
  for (int32_t scale : {GRPO_ADV_SCALE_GROUP, GRPO_ADV_SCALE_BATCH, GRPO_ADV_SCALE_NONE})
    for (int32_t singleton : {GRPO_ADV_SINGLETON_ZERO, GRPO_ADV_SINGLETON_RAW, GRPO_ADV_SINGLETON_NAN})
      for (int32_t nan : {GRPO_ADV_NAN_EXCLUDE, GRPO_ADV_NAN_AS_ZERO}) {
        const grpo_advantage_options o{scale, singleton, nan, 1e-4};
        contiguous_matches_reference(4096, 16, o);
        contiguous_matches_reference(30, 1, o);
        contiguous_matches_reference(37 * 5, 5, o);  // one block of 32 groups, then 5 one by one
        contiguous_matches_reference(4096, 16, o, false);  // every reward scored: the lanes' plain path
        contiguous_matches_reference(70 * 6, 6, o, false);  // 4 × 4 tiles and a column past them, 6 groups after
        contiguous_matches_reference(64 * 4, 4, o);
        contiguous_matches_reference(40, 1, o, false);  // a block of singletons
        indexed_matches_reference(1000, 37, o);
        rank_matches_reference(6, 8, 20, o);
      }
  scatter_tv10();
  bad_input();
  return grpo::test::report("test_advantage");
}
