// Bindings of the sampler. The TS layer (lib/kernels/sampling.ts) validates and builds the
// per-row parameter arrays; here they are read from one plain object and re-checked for length.
#include <string>

#include "grpo/sampling.h"
#include "napi_util.h"
#include "registry.h"

namespace grpo::addon {

namespace {

// The typed array in params[name] (copied in an async call), or NULL for null/undefined; its length must be `expected`.
template <typename T>
const T* param_array(Napi::Object params, const char* name, int64_t expected, CallMemory& memory) {
  Napi::Env env = params.Env();
  Napi::Value value = params.Get(name);
  if (value.IsNull() || value.IsUndefined()) return nullptr;
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != typed_array_type<T>())
    throw_status(env, GRPO_ERR_INVALID_ARGUMENT, std::string("params.") + name + " is not a typed array of the expected element type");
  View<T> view = view_of(value.As<Napi::TypedArrayOf<T>>());
  if (expected >= 0) expect_length(env, view, expected, name);
  memory.input(view);
  return view.data;
}

uint64_t param_u64(Napi::Object params, const char* lo, const char* hi) {
  auto word = [&](const char* name) {
    Napi::Value value = params.Get(name);
    if (!value.IsNumber()) throw_status(params.Env(), GRPO_ERR_INVALID_ARGUMENT, std::string("params.") + name + " must be a number");
    return static_cast<uint64_t>(value.As<Napi::Number>().Uint32Value());
  };
  return word(hi) << 32 | word(lo);
}

grpo_sampling_params read_params(Napi::Object o, int64_t rows, int64_t vocab, CallMemory& memory) {
  grpo_sampling_params p{};
  p.temperature = param_array<float>(o, "temperature", rows, memory);
  p.top_k = param_array<int32_t>(o, "topK", rows, memory);
  p.top_p = param_array<float>(o, "topP", rows, memory);
  p.min_p = param_array<float>(o, "minP", rows, memory);
  p.repetition_penalty = param_array<float>(o, "repetitionPenalty", rows, memory);
  p.presence_penalty = param_array<float>(o, "presencePenalty", rows, memory);
  p.frequency_penalty = param_array<float>(o, "frequencyPenalty", rows, memory);
  p.allow_bits = param_array<uint32_t>(o, "allow", rows * ((vocab + 31) / 32), memory);
  p.history_offsets = param_array<int32_t>(o, "historyOffsets", rows + 1, memory);
  p.history = param_array<int32_t>(o, "history", p.history_offsets ? p.history_offsets[rows] : -1, memory);
  p.seed = param_u64(o, "seedLo", "seedHi");
  p.step = param_u64(o, "stepLo", "stepHi");
  return p;
}

struct Call {
  View<float> logits;
  int64_t rows, vocab;
  grpo_sampling_params params;
};

// (logits, vocab, params, ...): rows = logits.length / vocab; the arrays are copied in an async call.
Call read_call(const Napi::CallbackInfo& info, CallMemory& memory) {
  Call c;
  c.logits = view_arg<float>(info, 0, "logits");
  c.vocab = int_arg(info, 1, "vocab");
  if (c.vocab < 1 || c.logits.length % c.vocab != 0)
    throw_status(info.Env(), GRPO_ERR_SHAPE, "logits length is not a multiple of vocab");
  c.rows = c.logits.length / c.vocab;
  if (!info[2].IsObject()) throw_status(info.Env(), GRPO_ERR_INVALID_ARGUMENT, "params must be an object");
  c.params = read_params(info[2].As<Napi::Object>(), c.rows, c.vocab, memory);
  memory.input(c.logits);
  return c;
}

// (logits, vocab, params, tokens, logp|null, logpRaw|null, async)
Napi::Value sample(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CallMemory memory(bool_arg(info, 6, "async"));
  const Call c = read_call(info, memory);
  auto tokens = view_arg<int32_t>(info, 3, "tokens");
  auto logp = view_arg<float>(info, 4, "logp", true);
  auto logp_raw = view_arg<float>(info, 5, "logpRaw", true);
  expect_length(env, tokens, c.rows, "tokens");
  if (logp.data) expect_length(env, logp, c.rows, "logp");
  if (logp_raw.data) expect_length(env, logp_raw, c.rows, "logpRaw");
  memory.output(tokens, "tokens");
  memory.output(logp, "logp");
  memory.output(logp_raw, "logpRaw");
  return dispatch(info, std::move(memory),
                  [=] { return grpo_sample(c.logits.data, c.rows, c.vocab, &c.params, tokens.data, logp.data, logp_raw.data); });
}

// (logits, vocab, params, probs, async)
Napi::Value sampling_probs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CallMemory memory(bool_arg(info, 4, "async"));
  const Call c = read_call(info, memory);
  auto probs = view_arg<float>(info, 3, "probs");
  expect_length(env, probs, c.rows * c.vocab, "probs");
  memory.output(probs, "probs");
  return dispatch(info, std::move(memory),
                  [=] { return grpo_sampling_probs(c.logits.data, c.rows, c.vocab, &c.params, probs.data); });
}

}  // namespace

void register_sampling(Napi::Env env, Napi::Object exports) {
  exports.Set("sample", Napi::Function::New(env, sample));
  exports.Set("samplingProbs", Napi::Function::New(env, sampling_probs));
}

}  // namespace grpo::addon
