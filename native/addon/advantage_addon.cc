// Bindings of the advantage kernels. Options arrive packed in a Float64Array whose layout is
// fixed by lib/kernels/advantage.ts (packOptions); outputs are caller-allocated typed arrays.
#include "grpo/advantage.h"
#include "napi_util.h"
#include "registry.h"

namespace grpo::addon {

namespace {

// [scale, singleton, nanRewards, stdEpsilon]
grpo_advantage_options advantage_options(const Napi::CallbackInfo& info, size_t index) {
  auto packed = view_arg<double>(info, index, "options");
  expect_length(info.Env(), packed, 4, "options");
  return {static_cast<int32_t>(packed.data[0]), static_cast<int32_t>(packed.data[1]),
          static_cast<int32_t>(packed.data[2]), packed.data[3]};
}

void write_stats(const grpo_advantage_stats& s, double* out) {
  out[0] = s.reward_mean, out[1] = s.reward_std, out[2] = s.frac_zero_std;
  out[3] = s.frac_cells_equal, out[4] = s.frac_cells_zero;
}

// (rewards, groupSize, groupIds|null, numGroups, options, advantages, stats[5], async)
Napi::Value group_advantages(const Napi::CallbackInfo& info) {
  auto rewards = view_arg<float>(info, 0, "rewards");
  const int64_t group_size = int_arg(info, 1, "groupSize");
  auto ids = view_arg<int32_t>(info, 2, "groupIds", true);
  const int64_t num_groups = int_arg(info, 3, "numGroups");
  const grpo_advantage_options options = advantage_options(info, 4);
  auto out = view_arg<float>(info, 5, "advantages");
  auto stats = view_arg<double>(info, 6, "stats");
  expect_length(info.Env(), out, rewards.length, "advantages");
  if (ids.data) expect_length(info.Env(), ids, rewards.length, "groupIds");
  expect_length(info.Env(), stats, 5, "stats");
  CallMemory memory(bool_arg(info, 7, "async"));
  memory.inputs(rewards, ids);
  memory.output(out, "advantages");
  memory.output(stats, "stats");
  return dispatch(info, std::move(memory),
                  [=] {
                    grpo_advantage_stats s{};
                    const grpo_status status = grpo_group_advantages(rewards.data, rewards.length, group_size, ids.data,
                                                                     num_groups, &options, out.data, &s);
                    write_stats(s, stats.data);
                    return status;
                  });
}

// (rewards, groups, candidates, ranks, options, advantages, stats[5], async)
Napi::Value rank_advantages(const Napi::CallbackInfo& info) {
  auto rewards = view_arg<float>(info, 0, "rewards");
  const int64_t groups = int_arg(info, 1, "groups"), candidates = int_arg(info, 2, "candidates"),
                ranks = int_arg(info, 3, "ranks");
  const grpo_advantage_options options = advantage_options(info, 4);
  auto out = view_arg<float>(info, 5, "advantages");
  auto stats = view_arg<double>(info, 6, "stats");
  expect_length(info.Env(), rewards, groups * candidates * ranks, "rewards");
  expect_length(info.Env(), out, rewards.length, "advantages");
  expect_length(info.Env(), stats, 5, "stats");
  CallMemory memory(bool_arg(info, 7, "async"));
  memory.input(rewards);
  memory.output(out, "advantages");
  memory.output(stats, "stats");
  return dispatch(info, std::move(memory),
                  [=] {
                    grpo_advantage_stats s{};
                    const grpo_status status =
                        grpo_rank_advantages(rewards.data, groups, candidates, ranks, &options, out.data, &s);
                    write_stats(s, stats.data);
                    return status;
                  });
}

// (itemAdvantages, segments, mask, eosPositions, cols, ranks, shaping[4], out, async)
Napi::Value scatter_item_advantages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto item_adv = view_arg<float>(info, 0, "itemAdvantages");
  auto segments = view_arg<int32_t>(info, 1, "segments");
  auto mask = view_arg<uint8_t>(info, 2, "mask");
  auto eos = view_arg<int32_t>(info, 3, "eosPositions");
  const int64_t cols = int_arg(info, 4, "cols"), ranks = int_arg(info, 5, "ranks"), rows = eos.length;
  auto packed = view_arg<double>(info, 6, "shaping");
  auto out = view_arg<float>(info, 7, "out");
  expect_length(env, packed, 4, "shaping");
  expect_length(env, item_adv, rows * ranks, "itemAdvantages");
  expect_length(env, segments, rows * cols, "segments");
  expect_length(env, mask, rows * cols, "mask");
  expect_length(env, out, rows * cols, "out");
  const grpo_length_shaping shaping{packed.data[0] != 0.0, static_cast<float>(packed.data[1]),
                                    static_cast<float>(packed.data[2]), static_cast<float>(packed.data[3])};
  CallMemory memory(bool_arg(info, 8, "async"));
  memory.inputs(item_adv, segments, mask, eos);
  memory.output(out, "out");
  return dispatch(info, std::move(memory),
                  [=] {
                    return grpo_scatter_item_advantages(item_adv.data, segments.data, mask.data, eos.data, rows, cols,
                                                        ranks, &shaping, out.data);
                  });
}

// (advantages, mask, truncated|null, prefixEnd|null, cols, truncation, out, lossMask, async)
Napi::Value broadcast_advantages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto adv = view_arg<float>(info, 0, "advantages");
  auto mask = view_arg<uint8_t>(info, 1, "mask");
  auto truncated = view_arg<uint8_t>(info, 2, "truncated", true);
  auto prefix_end = view_arg<int32_t>(info, 3, "prefixEnd", true);
  const int64_t cols = int_arg(info, 4, "cols"), rows = adv.length;
  const int32_t truncation = static_cast<int32_t>(int_arg(info, 5, "truncation"));
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
