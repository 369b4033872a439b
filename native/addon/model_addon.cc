// Bindings of the built-in model (grpo/model.h). A model is a JS External sharing a grpo_model* with the async
// calls in flight on it; the model is destroyed when the External has been collected or disposed and the last
// such call has finished, so modelDispose never frees memory a worker uses. A model runs one call at a time:
// while an async call on it is in flight, every other call but modelTensors is refused. Heavy calls take `async`.
#include <memory>
#include <string>
#include <vector>

#include "grpo/model.h"
#include "model_handle.h"
#include "napi_util.h"
#include "optimizer_bindings.h"
#include "registry.h"
#include "sampler_settings.h"

namespace grpo::addon {

namespace {

// Offsets arrive as a Float64Array of integers; the C ABI takes int64.
std::vector<int64_t> offsets_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  auto view = view_arg<double>(info, index, name);
  return std::vector<int64_t>(view.data, view.data + view.length);
}

void check_offsets(Napi::Env env, const std::vector<int64_t>& offsets, int64_t tokens) {
  if (offsets.size() < 2 || offsets.back() != tokens) throw_status(env, GRPO_ERR_SHAPE, "offsets must end at the token count");
}

constexpr Choice kRopeTypes[] = {
    {"default", GRPO_ROPE_DEFAULT}, {"linear", GRPO_ROPE_LINEAR}, {"yarn", GRPO_ROPE_YARN}, {"llama3", GRPO_ROPE_LLAMA3}};

void read_rope_scaling(Fields f, grpo_rope_scaling& r) {
  r.type = f.choice("type", kRopeTypes);
  r.factor = f.f32("factor");
  r.low_freq_factor = f.f32("lowFreqFactor");
  r.high_freq_factor = f.f32("highFreqFactor");
  r.original_max_position_embeddings = f.integer("originalMaxPositions");
  r.beta_fast = f.f32("betaFast");
  r.beta_slow = f.f32("betaSlow");
  r.mscale = f.f32("mscale");
  r.mscale_all_dim = f.f32("mscaleAllDim");
  r.attention_factor = f.f32("attentionFactor");
  r.truncate = f.boolean("truncate");
  f.done();
}

// The JS config: grpo_model_config's fields and its RoPE scaling.
struct ScaledConfig {
  grpo_model_config config;
  grpo_rope_scaling rope;
};

void read_config(Fields& f, ScaledConfig& s) {
  grpo_model_config& c = s.config;
  c.vocab_size = f.integer("vocabSize");
  c.hidden_size = f.integer("hiddenSize");
  c.intermediate_size = f.integer("intermediateSize");
  c.num_hidden_layers = f.integer("numLayers");
  c.num_attention_heads = f.integer("numHeads");
  c.num_key_value_heads = f.integer("numKvHeads");
  c.head_dim = f.integer("headDim");
  c.max_position_embeddings = f.integer("maxPositions");
  c.rms_norm_eps = f.f32("rmsNormEps");
  c.rope_theta = f.f32("ropeTheta");
  c.tie_word_embeddings = f.boolean("tieEmbeddings");
  c.attention_bias = f.boolean("attentionBias");
  c.qk_norm = f.boolean("qkNorm");
  read_rope_scaling(f.object("ropeScaling"), s.rope);
}

// (config) → a model with zero parameters
Napi::Value create(const Napi::CallbackInfo& info) {
  const auto c = read_struct<ScaledConfig>(info[0], "config", read_config);
  grpo_model* model = nullptr;
  check(info.Env(), grpo_model_create_scaled(&c.config, &c.rope, &model));
  return wrap(info.Env(), model);
}

// (model, seed, async)
Napi::Value init(const Napi::CallbackInfo& info) {
  Model model = model_arg(info);
  const uint64_t seed = static_cast<uint64_t>(int_arg(info, 1, "seed"));
  return dispatch(info, CallMemory(bool_arg(info, 2, "async")), [=] { return grpo_model_init(model.get(), seed); });
}

Napi::Value clone(const Napi::CallbackInfo& info) {
  grpo_model* copy = nullptr;
  check(info.Env(), grpo_model_clone(model_arg(info).get(), &copy));
  return wrap(info.Env(), copy);
}

// Drops the External's share: the model is destroyed now, or when the async call in flight on it finishes.
Napi::Value dispose(const Napi::CallbackInfo& info) {
  if (info[0].IsExternal()) info[0].As<Napi::External<Handle>>().Data()->model.reset();
  return info.Env().Undefined();
}

// → [{ name, shape }] in layout order
Napi::Value tensors(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  grpo_model* model = handle_arg(info)->model.get();  // the layout never changes: readable while busy
  const int64_t n = grpo_model_num_tensors(model);
  Napi::Array list = Napi::Array::New(env, static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const char* name;
    int64_t ndim, shape[2];
    check(env, grpo_model_tensor_info(model, i, &name, &ndim, shape));
    Napi::Array dims = Napi::Array::New(env, static_cast<size_t>(ndim));
    for (int64_t d = 0; d < ndim; ++d) dims.Set(static_cast<uint32_t>(d), Napi::Number::New(env, static_cast<double>(shape[d])));
    Napi::Object entry = Napi::Object::New(env);
    entry.Set("name", name);
    entry.Set("shape", dims);
    list.Set(static_cast<uint32_t>(i), entry);
  }
  return list;
}

Napi::Value get_tensor(const Napi::CallbackInfo& info) {
  auto out = view_arg<float>(info, 2, "out");
  check(info.Env(), grpo_model_get_tensor(model_arg(info).get(), info[1].ToString().Utf8Value().c_str(), out.data, out.length));
  return info.Env().Undefined();
}

Napi::Value set_tensor(const Napi::CallbackInfo& info) {
  auto values = view_arg<float>(info, 2, "values");
  check(info.Env(), grpo_model_set_tensor(model_arg(info).get(), info[1].ToString().Utf8Value().c_str(), values.data, values.length));
  return info.Env().Undefined();
}

// (model, tokens, offsets, targets, options, train, logp, entropy|null, async)
Napi::Value score(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Model model = model_arg(info);
  auto tokens = view_arg<int32_t>(info, 1, "tokens");
  auto offsets = offsets_arg(info, 2, "offsets");
  auto targets = view_arg<int32_t>(info, 3, "targets");
  const auto o = read_struct<grpo_score_options>(info[4], "options", read_scoring<grpo_score_options>);
  const bool train = bool_arg(info, 5, "train");
  auto logp = view_arg<float>(info, 6, "logp");
  auto entropy = view_arg<float>(info, 7, "entropy", true);
  check_offsets(env, offsets, tokens.length);
  expect_length(env, targets, tokens.length, "targets");
  expect_length(env, logp, tokens.length, "logp");
  if (entropy.data) expect_length(env, entropy, tokens.length, "entropy");
  CallMemory memory(bool_arg(info, 8, "async"));
  memory.inputs(tokens, targets);
  memory.output(logp, "logp");
  memory.output(entropy, "entropy");
  return dispatch(info, std::move(memory),
                  [=] {
                    return grpo_model_score(model.get(), tokens.data, offsets.data(), static_cast<int64_t>(offsets.size()) - 1,
                                            targets.data, &o, train, logp.data, entropy.data);
                  });
}

// (model, tokens, offsets, logits, async)
Napi::Value logits(const Napi::CallbackInfo& info) {
  Model model = model_arg(info);
  auto tokens = view_arg<int32_t>(info, 1, "tokens");
  auto offsets = offsets_arg(info, 2, "offsets");
  auto out = view_arg<float>(info, 3, "logits");
  check_offsets(info.Env(), offsets, tokens.length);
  CallMemory memory(bool_arg(info, 4, "async"));
  memory.input(tokens);
  memory.output(out, "logits");
  return dispatch(info, std::move(memory), [=] {
    return grpo_model_logits(model.get(), tokens.data, offsets.data(), static_cast<int64_t>(offsets.size()) - 1, out.data);
  });
}

// (model, gradLogp, gradEntropy|null, async)
Napi::Value backward(const Napi::CallbackInfo& info) {
  Model model = model_arg(info);
  auto grad_logp = view_arg<float>(info, 1, "gradLogp");
  auto grad_entropy = view_arg<float>(info, 2, "gradEntropy", true);
  CallMemory memory(bool_arg(info, 3, "async"));
  memory.inputs(grad_logp, grad_entropy);
  return dispatch(info, std::move(memory), [=] { return grpo_model_backward(model.get(), grad_logp.data, grad_entropy.data); });
}

Napi::Value set_bf16(const Napi::CallbackInfo& info) {
  check(info.Env(), grpo_model_set_bf16_matmuls(model_arg(info).get(), bool_arg(info, 1, "enabled") ? 1 : 0));
  return info.Env().Undefined();
}

Napi::Value zero_grad(const Napi::CallbackInfo& info) {
  check(info.Env(), grpo_model_zero_grad(model_arg(info).get()));
  return info.Env().Undefined();
}

void read_adamw(Fields& f, grpo_adamw_options& o) {
  o.lr = f.f32("lr");
  o.beta1 = f.f32("beta1");
  o.beta2 = f.f32("beta2");
  o.eps = f.f32("eps");
  o.weight_decay = f.f32("weightDecay");
  o.max_grad_norm = f.f32("maxGradNorm");
}

// (model, options, gradNorm Float32Array[1], async)
Napi::Value adamw(const Napi::CallbackInfo& info) {
  Model model = model_arg(info);
  const auto o = read_struct<grpo_adamw_options>(info[1], "options", read_adamw);
  auto norm = view_arg<float>(info, 2, "gradNorm");
  expect_length(info.Env(), norm, 1, "gradNorm");
  CallMemory memory(bool_arg(info, 3, "async"));
  memory.output(norm, "gradNorm");
  return dispatch(info, std::move(memory), [=] { return grpo_model_adamw_step(model.get(), &o, norm.data); });
}

// The moments of every parameter: (model, m, v) → step and (model, m, v, step).
using Optimizer = OptimizerBindings<grpo_model_num_parameters, grpo_model_get_optimizer, grpo_model_set_optimizer>;

// Rows of model.embed_tokens.weight (tensor 0).
int64_t vocab_of(grpo_model* model) {
  const char* name;
  int64_t ndim, shape[2];
  grpo_model_tensor_info(model, 0, &name, &ndim, shape);
  return shape[0];
}

// grpo_generate_options: { maxNewTokens, stopTokens, sampling }, `sampling` the sampler settings object of `sample`
// (the model sets its history and step as it decodes).
struct GenerateArgs {
  int64_t max_new = 0;
  View<int32_t> stop;
  grpo_sampling_params sampling{};
};

// (model, prompts, offsets, options, outTokens, outLogp, outLengths F64, truncated U8, async)
Napi::Value generate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Model model = model_arg(info);
  auto prompts = view_arg<int32_t>(info, 1, "prompts");
  auto offsets = offsets_arg(info, 2, "offsets");
  check_offsets(env, offsets, prompts.length);
  const int64_t nseq = static_cast<int64_t>(offsets.size()) - 1;
  CallMemory memory(bool_arg(info, 8, "async"));
  auto g = read_struct<GenerateArgs>(info[3], "options", [&](Fields& f, GenerateArgs& a) {
    a.max_new = f.integer("maxNewTokens");
    a.stop = f.array<int32_t>("stopTokens");
    a.sampling = sampler_settings(f.field("sampling"), "options.sampling", nseq, vocab_of(model.get()), memory);
  });
  auto tokens = view_arg<int32_t>(info, 4, "outTokens");
  auto logp = view_arg<float>(info, 5, "outLogp");
  auto lengths = view_arg<double>(info, 6, "outLengths");
  auto truncated = view_arg<uint8_t>(info, 7, "truncated");
  expect_length(env, tokens, nseq * g.max_new, "outTokens");
  expect_length(env, logp, nseq * g.max_new, "outLogp");
  expect_length(env, lengths, nseq, "outLengths");
  expect_length(env, truncated, nseq, "truncated");
  memory.inputs(prompts, g.stop);
  memory.output(tokens, "outTokens");
  memory.output(logp, "outLogp");
  memory.output(lengths, "outLengths");
  memory.output(truncated, "truncated");
  return dispatch(info, std::move(memory),
                  [=] {
                    grpo_generate_options o{g.max_new, &g.sampling, g.stop.data, g.stop.length};
                    std::vector<int64_t> n(static_cast<size_t>(nseq));
                    grpo_status s = grpo_model_generate(model.get(), prompts.data, offsets.data(), nseq, &o, tokens.data, logp.data,
                                                        n.data(), truncated.data);
                    for (int64_t i = 0; i < nseq; ++i) lengths.data[i] = static_cast<double>(n[i]);
                    return s;
                  });
}

}  // namespace

void register_model(Napi::Env env, Napi::Object exports) {
  exports.Set("modelCreate", Napi::Function::New(env, create));
  exports.Set("modelInit", Napi::Function::New(env, init));
  exports.Set("modelClone", Napi::Function::New(env, clone));
  exports.Set("modelDispose", Napi::Function::New(env, dispose));
  exports.Set("modelTensors", Napi::Function::New(env, tensors));
  exports.Set("modelGetTensor", Napi::Function::New(env, get_tensor));
  exports.Set("modelSetTensor", Napi::Function::New(env, set_tensor));
  exports.Set("modelScore", Napi::Function::New(env, score));
  exports.Set("modelLogits", Napi::Function::New(env, logits));
  exports.Set("modelBackward", Napi::Function::New(env, backward));
  exports.Set("modelSetBf16Matmuls", Napi::Function::New(env, set_bf16));
  exports.Set("modelZeroGrad", Napi::Function::New(env, zero_grad));
  exports.Set("modelAdamw", Napi::Function::New(env, adamw));
  exports.Set("modelGetOptimizer", Napi::Function::New(env, Optimizer::get));
  exports.Set("modelSetOptimizer", Napi::Function::New(env, Optimizer::set));
  exports.Set("modelGenerate", Napi::Function::New(env, generate));
}

}  // namespace grpo::addon
