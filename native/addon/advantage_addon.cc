// Bindings of the advantage kernels. Options arrive as plain objects read field by field (enums by name);
// outputs are caller-allocated typed arrays, the stats come back as a plain object.
#include <memory>

#include "grpo/advantage.h"
#include "napi_util.h"
#include "registry.h"

namespace grpo::addon {

namespace {

constexpr Choice kScales[] = {{"group", GRPO_ADV_SCALE_GROUP}, {"batch", GRPO_ADV_SCALE_BATCH}, {"none", GRPO_ADV_SCALE_NONE}};
constexpr Choice kSingletons[] = {{"zero", GRPO_ADV_SINGLETON_ZERO}, {"raw", GRPO_ADV_SINGLETON_RAW}, {"nan", GRPO_ADV_SINGLETON_NAN}};
constexpr Choice kNanRewards[] = {{"exclude", GRPO_ADV_NAN_EXCLUDE}, {"asZero", GRPO_ADV_NAN_AS_ZERO}};
constexpr Choice kTruncations[] = {{"keep", GRPO_TRUNCATION_KEEP}, {"dropTruncated", GRPO_TRUNCATION_DROP},
                                   {"dropSuffix", GRPO_TRUNCATION_DROP_SUFFIX}};

void read_normalize(Fields& f, grpo_advantage_options& o) {
  o.scale = f.choice("scale", kScales);
  o.singleton = f.choice("singletonGroup", kSingletons);
  o.nan_rewards = f.choice("nanRewards", kNanRewards);
  o.std_epsilon = f.number("stdEpsilon");
}

grpo_advantage_options advantage_options(Napi::Value value) {
  return read_struct<grpo_advantage_options>(value, "options", read_normalize);
}

void read_shaping(Fields& f, grpo_length_shaping& s) {
  s.enabled = f.boolean("enabled");
  s.end_of_list = f.f32("endOfList");
  s.extra_token = f.f32("extraToken");
  s.early_stop = f.f32("earlyStop");
}

// The stats every advantage kernel reports; `rank_wise` adds the (group, rank) cell fractions.
Napi::Value advantage_stats(Napi::Env env, const grpo_advantage_stats& s, bool rank_wise) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("rewardMean", s.reward_mean);
  o.Set("rewardStd", s.reward_std);
  o.Set("fracRewardZeroStd", s.frac_zero_std);
  if (rank_wise) {
    o.Set("fracCellsEqual", s.frac_cells_equal);
    o.Set("fracCellsZero", s.frac_cells_zero);
  }
  return o;
}

Result stats_result(std::shared_ptr<grpo_advantage_stats> stats, bool rank_wise) {
  return [stats, rank_wise](Napi::Env env) { return advantage_stats(env, *stats, rank_wise); };
}

// (rewards, groupSize, groupIds|null, numGroups, options, advantages, async) -> stats
Napi::Value group_advantages(const Napi::CallbackInfo& info) {
  auto rewards = view_arg<float>(info, 0, "rewards");
  const int64_t group_size = int_arg(info, 1, "groupSize");
  auto ids = view_arg<int32_t>(info, 2, "groupIds", true);
  const int64_t num_groups = int_arg(info, 3, "numGroups");
  const grpo_advantage_options options = advantage_options(info[4]);
  auto out = view_arg<float>(info, 5, "advantages");
  expect_length(info.Env(), out, rewards.length, "advantages");
  if (ids.data) expect_length(info.Env(), ids, rewards.length, "groupIds");
  CallMemory memory(bool_arg(info, 6, "async"));
  memory.inputs(rewards, ids);
  memory.output(out, "advantages");
  auto stats = std::make_shared<grpo_advantage_stats>();
  return dispatch(
      info, std::move(memory),
      [=] {
        return grpo_group_advantages(rewards.data, rewards.length, group_size, ids.data, num_groups, &options, out.data,
                                     stats.get());
      },
      stats_result(stats, false));
}

// (rewards, groups, candidates, ranks, options, advantages, async) -> stats
Napi::Value rank_advantages(const Napi::CallbackInfo& info) {
  auto rewards = view_arg<float>(info, 0, "rewards");
  const int64_t groups = int_arg(info, 1, "groups"), candidates = int_arg(info, 2, "candidates"),
                ranks = int_arg(info, 3, "ranks");
  const grpo_advantage_options options = advantage_options(info[4]);
  auto out = view_arg<float>(info, 5, "advantages");
  expect_length(info.Env(), rewards, groups * candidates * ranks, "rewards");
  expect_length(info.Env(), out, rewards.length, "advantages");
  CallMemory memory(bool_arg(info, 6, "async"));
  memory.input(rewards);
  memory.output(out, "advantages");
  auto stats = std::make_shared<grpo_advantage_stats>();
  return dispatch(
      info, std::move(memory),
      [=] { return grpo_rank_advantages(rewards.data, groups, candidates, ranks, &options, out.data, stats.get()); },
      stats_result(stats, true));
}

// (itemAdvantages, segments, mask, eosPositions, cols, ranks, shaping, out, async)
Napi::Value scatter_item_advantages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto item_adv = view_arg<float>(info, 0, "itemAdvantages");
  auto segments = view_arg<int32_t>(info, 1, "segments");
  auto mask = view_arg<uint8_t>(info, 2, "mask");
  auto eos = view_arg<int32_t>(info, 3, "eosPositions");
  const int64_t cols = int_arg(info, 4, "cols"), ranks = int_arg(info, 5, "ranks"), rows = eos.length;
  const auto shaping = read_struct<grpo_length_shaping>(info[6], "shaping", read_shaping);
  auto out = view_arg<float>(info, 7, "out");
  expect_length(env, item_adv, rows * ranks, "itemAdvantages");
  expect_length(env, segments, rows * cols, "segments");
  expect_length(env, mask, rows * cols, "mask");
  expect_length(env, out, rows * cols, "out");
  CallMemory memory(bool_arg(info, 8, "async"));
  memory.inputs(item_adv, segments, mask, eos);
  memory.output(out, "out");
  return dispatch(info, std::move(memory),
                  [=] {
                    return grpo_scatter_item_advantages(item_adv.data, segments.data, mask.data, eos.data, rows, cols,
                                                        ranks, &shaping, out.data);
                  });
}

// { truncation }
void read_truncation(Fields& f, int32_t& truncation) { truncation = f.choice("truncation", kTruncations); }

// (advantages, mask, truncated|null, prefixEnd|null, cols, options, out, lossMask, async)
Napi::Value broadcast_advantages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto adv = view_arg<float>(info, 0, "advantages");
  auto mask = view_arg<uint8_t>(info, 1, "mask");
  auto truncated = view_arg<uint8_t>(info, 2, "truncated", true);
  auto prefix_end = view_arg<int32_t>(info, 3, "prefixEnd", true);
  const int64_t cols = int_arg(info, 4, "cols"), rows = adv.length;
  const int32_t truncation = read_struct<int32_t>(info[5], "options", read_truncation);
  auto out = view_arg<float>(info, 6, "out");
  auto loss_mask = view_arg<uint8_t>(info, 7, "lossMask");
  expect_length(env, mask, rows * cols, "mask");
  if (truncated.data) expect_length(env, truncated, rows, "truncated");
  if (prefix_end.data) expect_length(env, prefix_end, rows, "prefixEnd");
  expect_length(env, out, rows * cols, "out");
  expect_length(env, loss_mask, rows * cols, "lossMask");
  CallMemory memory(bool_arg(info, 8, "async"));
  memory.inputs(adv, mask, truncated, prefix_end);
  memory.output(out, "out");
  memory.output(loss_mask, "lossMask");
  return dispatch(info, std::move(memory),
                  [=] {
                    return grpo_broadcast_advantages(adv.data, mask.data, truncated.data, prefix_end.data, rows, cols,
                                                     truncation, out.data, loss_mask.data);
                  });
}

}  // namespace

void register_advantage(Napi::Env env, Napi::Object exports) {
  exports.Set("groupAdvantages", Napi::Function::New(env, group_advantages));
  exports.Set("rankAdvantages", Napi::Function::New(env, rank_advantages));
  exports.Set("scatterItemAdvantages", Napi::Function::New(env, scatter_item_advantages));
  exports.Set("broadcastAdvantages", Napi::Function::New(env, broadcast_advantages));
}

}  // namespace grpo::addon
