// Binding of the policy loss. The options arrive as a plain object read field by field into grpo_loss_options
// (the enums by name, one table each); the stats come back as a plain object named as lib/kernels/loss.ts names them.
#include <memory>

#include "grpo/loss.h"
#include "napi_util.h"
#include "registry.h"

namespace grpo::addon {

namespace {

constexpr Choice kLossTypes[] = {{"clip", GRPO_LOSS_CLIP}, {"cispoCap", GRPO_LOSS_CISPO_CAP}, {"cispoClamp", GRPO_LOSS_CISPO_CLAMP},
                                 {"sapo", GRPO_LOSS_SAPO},  {"vespo", GRPO_LOSS_VESPO},        {"gpg", GRPO_LOSS_GPG},
                                 {"geoMean", GRPO_LOSS_GEO_MEAN}, {"none", GRPO_LOSS_NONE}};
constexpr Choice kIsLevels[] = {{"token", GRPO_IS_TOKEN}, {"sequence", GRPO_IS_SEQUENCE},
                                {"sequenceToken", GRPO_IS_SEQUENCE_TOKEN}, {"item", GRPO_IS_ITEM}};
constexpr Choice kKlEstimators[] = {{"k1", GRPO_KL_K1}, {"abs", GRPO_KL_ABS}, {"k2", GRPO_KL_K2}, {"k3", GRPO_KL_K3}};
constexpr Choice kKlClamps[] = {{"none", GRPO_KL_CLAMP_NONE}, {"verl", GRPO_KL_CLAMP_VERL}, {"openrlhf", GRPO_KL_CLAMP_OPENRLHF}};
constexpr Choice kAggregations[] = {{"globalTokenMean", GRPO_AGG_GLOBAL_TOKEN_MEAN},
                                    {"localTokenMean", GRPO_AGG_LOCAL_TOKEN_MEAN},
                                    {"seqMeanTokenMean", GRPO_AGG_SEQ_MEAN_TOKEN_MEAN},
                                    {"seqMeanTokenSum", GRPO_AGG_SEQ_MEAN_TOKEN_SUM},
                                    {"tokenSumOverBL", GRPO_AGG_TOKEN_SUM_OVER_BL},
                                    {"tokenSumOverL", GRPO_AGG_TOKEN_SUM_OVER_L},
                                    {"allPositionsLengthWeighted", GRPO_AGG_ALL_POSITIONS_LENGTH_WEIGHTED}};
constexpr Choice kEmptyBatch[] = {{"zero", 0}, {"nan", 1}};

void read_surrogate(Fields& f, grpo_surrogate& s) {
  s.type = f.choice("lossType", kLossTypes);
  s.epsilon_low = f.number("epsilonLow");
  s.epsilon_high = f.number("epsilonHigh");
  s.delta = f.number("delta");
  s.dual_clip_c = f.number("dualClipC");
  s.log_ratio_clamp = f.number("logRatioClamp");
  s.cispo_cap = f.number("cispoCap");
  s.sapo_tau_pos = f.number("sapoTauPos");
  s.sapo_tau_neg = f.number("sapoTauNeg");
  Fields vespo = f.object("vespo");
  s.vespo_k_pos = vespo.number("kPos");
  s.vespo_lambda_pos = vespo.number("lambdaPos");
  s.vespo_k_neg = vespo.number("kNeg");
  s.vespo_lambda_neg = vespo.number("lambdaNeg");
  vespo.done();
}

void read_loss(Fields& f, grpo_loss_options& o) {
  read_surrogate(f, o.surrogate);
  o.is_level = f.choice("isLevel", kIsLevels);
  o.num_items = f.i32("numItems");
  o.kl.estimator = f.choice("klEstimator", kKlEstimators);
  o.kl.clamp = f.choice("klClamp", kKlClamps);
  o.kl.bias_correction = f.boolean("klBiasCorrection");
  o.kl.beta = f.number("beta");
  o.kl.k2_gradient = f.boolean("klK2Gradient");
  o.aggregate.mode = f.choice("aggregation", kAggregations);
  o.aggregate.empty_is_nan = f.choice("emptyBatch", kEmptyBatch);
  o.aggregate.token_count = f.number("tokenCount");
  o.aggregate.sequence_count = f.number("sequenceCount");
  o.aggregate.max_completion_length = f.number("maxCompletionLength");
  o.aggregate.loss_scale_factor = f.number("lossScaleFactor");
  o.aggregate.accumulation_steps = f.number("accumulationSteps");
  o.top_entropy_quantile = f.number("topEntropyQuantile");
}

Napi::Value loss_stats(Napi::Env env, const grpo_loss_stats& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("loss", s.loss);
  o.Set("policyLoss", s.policy_loss);
  o.Set("kl", s.kl_mean);
  o.Set("clipRatioLow", s.clip_ratio_low);
  o.Set("clipRatioHigh", s.clip_ratio_high);
  o.Set("clipRatioRegion", s.clip_ratio_region);
  o.Set("dualClipRatio", s.dual_clip_ratio);
  o.Set("ratioMean", s.ratio_mean);
  o.Set("ratioMin", s.ratio_min);
  o.Set("ratioMax", s.ratio_max);
  o.Set("entropy", s.entropy_mean);
  o.Set("ppoKl", s.ppo_kl);
  o.Set("tokens", s.tokens);
  o.Set("phiSeqMean", s.phi_seq_mean);
  return o;
}

// (logp, oldLogp|null, refLogp|null, advantages [rows, cols] or [rows], mask, segments|null, entropy|null, cols,
//  options, gradLogp, async) -> stats
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
  const auto options = read_struct<grpo_loss_options>(info[8], "options", read_loss);
  auto grad = view_arg<float>(info, 9, "gradLogp");
  if (cols < 1 || logp.length % cols != 0) throw_status(env, GRPO_ERR_SHAPE, "logp length is not a multiple of cols");
  const int64_t rows = logp.length / cols;
  const bool per_token = advantages.length == logp.length;  // with cols = 1, [rows, 1] and [rows] mean the same
  for (auto* view : {&old_logp, &ref_logp, &entropy})
    if (view->data) expect_length(env, *view, logp.length, "oldLogp/refLogp/entropy");
  if (!per_token) expect_length(env, advantages, rows, "advantages");
  expect_length(env, mask, logp.length, "mask");
  if (segments.data) expect_length(env, segments, logp.length, "segments");
  expect_length(env, grad, logp.length, "gradLogp");
  CallMemory memory(bool_arg(info, 10, "async"));
  memory.inputs(logp, old_logp, ref_logp, advantages, mask, segments, entropy);
  memory.output(grad, "gradLogp");
  auto stats = std::make_shared<grpo_loss_stats>();
  return dispatch(
      info, std::move(memory),
      [=] {
        return grpo_policy_loss(logp.data, old_logp.data, ref_logp.data, advantages.data, per_token, mask.data, segments.data,
                                entropy.data, rows, cols, &options, grad.data, stats.get());
      },
      [stats](Napi::Env env) { return loss_stats(env, *stats); });
}

}  // namespace

void register_loss(Napi::Env env, Napi::Object exports) {
  exports.Set("policyLoss", Napi::Function::New(env, policy_loss));
}

}  // namespace grpo::addon
