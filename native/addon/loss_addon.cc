// Binding of the policy loss. Options arrive packed in a Float64Array whose layout is fixed by
// lib/kernels/loss.ts (pack); the 14 stats come back in a Float64Array.
#include "grpo/loss.h"
#include "napi_util.h"
#include "registry.h"

namespace grpo::addon {

namespace {

constexpr int64_t kPackedOptions = 29, kStats = 14;

grpo_loss_options unpack(const double* v) {
  grpo_loss_options o{};
  o.surrogate = {static_cast<int32_t>(v[0]), v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12]};
  o.is_level = static_cast<int32_t>(v[13]);
  o.num_items = static_cast<int32_t>(v[14]);
  o.kl = {static_cast<int32_t>(v[15]), static_cast<int32_t>(v[16]), static_cast<int32_t>(v[17]), v[18], static_cast<int32_t>(v[28])};
  o.aggregate = {static_cast<int32_t>(v[19]), static_cast<int32_t>(v[20]), v[21], v[22], v[23], v[24], v[25]};
  o.top_entropy_quantile = v[26];
  return o;
}

void write_stats(const grpo_loss_stats& s, double* out) {
  const double values[kStats] = {s.loss,       s.policy_loss, s.kl_mean,      s.clip_ratio_low, s.clip_ratio_high,
                                 s.clip_ratio_region, s.dual_clip_ratio, s.ratio_mean, s.ratio_min, s.ratio_max,
                                 s.entropy_mean, s.ppo_kl, s.tokens, s.phi_seq_mean};
  for (int64_t i = 0; i < kStats; ++i) out[i] = values[i];
}

// (logp, oldLogp|null, refLogp|null, advantages, mask, segments|null, entropy|null, cols, options, gradLogp, stats, async)
Napi::Value policy_loss(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto logp = view_arg<float>(info, 0, "logp");
  auto old_logp = view_arg<float>(info, 1, "oldLogp", true);
  auto ref_logp = view_arg<float>(info, 2, "refLogp", true);
  auto advantages = view_arg<float>(info, 3, "advantages");
  auto mask = view_arg<uint8_t>(info, 4, "mask");
  auto segments = view_arg<int32_t>(info, 5, "segments", true);
  auto entropy = view_arg<float>(info, 6, "entropy", true);
  const int64_t cols = int_arg(info, 7, "cols");
  auto packed = view_arg<double>(info, 8, "options");
  auto grad = view_arg<float>(info, 9, "gradLogp");
  auto stats = view_arg<double>(info, 10, "stats");
  expect_length(env, packed, kPackedOptions, "options");
  expect_length(env, stats, kStats, "stats");
  if (cols < 1 || logp.length % cols != 0) throw_status(env, GRPO_ERR_SHAPE, "logp length is not a multiple of cols");
  const int64_t rows = logp.length / cols;
  const bool per_token = packed.data[27] != 0.0;
  for (auto* view : {&old_logp, &ref_logp, &entropy})
    if (view->data) expect_length(env, *view, logp.length, "oldLogp/refLogp/entropy");
  expect_length(env, advantages, per_token ? logp.length : rows, "advantages");
  expect_length(env, mask, logp.length, "mask");
  if (segments.data) expect_length(env, segments, logp.length, "segments");
  expect_length(env, grad, logp.length, "gradLogp");
  const grpo_loss_options options = unpack(packed.data);
  CallMemory memory(bool_arg(info, 11, "async"));
  memory.inputs(logp, old_logp, ref_logp, advantages, mask, segments, entropy);
  memory.output(grad, "gradLogp");
  memory.output(stats, "stats");
  return dispatch(info, std::move(memory),
                  [=] {
                    grpo_loss_stats s{};
                    const grpo_status status =
                        grpo_policy_loss(logp.data, old_logp.data, ref_logp.data, advantages.data, per_token, mask.data,
                                         segments.data, entropy.data, rows, cols, &options, grad.data, &s);
                    write_stats(s, stats.data);
                    return status;
                  });
}

}  // namespace

void register_loss(Napi::Env env, Napi::Object exports) {
  exports.Set("policyLoss", Napi::Function::New(env, policy_loss));
}

}  // namespace grpo::addon
