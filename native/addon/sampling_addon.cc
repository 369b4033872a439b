// Bindings of the sampler. The TS layer (lib/kernels/sampling-params.ts) validates and builds the per-row
// parameter arrays; here they are read by name from one plain object and re-checked for length.
#include "grpo/sampling.h"
#include "napi_util.h"
#include "registry.h"
#include "sampler_settings.h"

namespace grpo::addon {

namespace {

// The typed array in settings[key] (copied in an async call), or NULL for null; its length must be `expected`.
template <typename T>
const T* row_array(Fields& f, const char* key, int64_t expected, CallMemory& memory) {
  View<T> view = f.array<T>(key, true);
  if (!view.data) return nullptr;
  if (expected >= 0) expect_length(f.env(), view, expected, key);
  memory.input(view);
  return view.data;
}

}  // namespace

grpo_sampling_params sampler_settings(Napi::Value value, const char* name, int64_t rows, int64_t vocab, CallMemory& memory) {
  return read_struct<grpo_sampling_params>(value, name, [&](Fields& f, grpo_sampling_params& p) {
    p.temperature = row_array<float>(f, "temperature", rows, memory);
    p.top_k = row_array<int32_t>(f, "topK", rows, memory);
    p.top_p = row_array<float>(f, "topP", rows, memory);
    p.min_p = row_array<float>(f, "minP", rows, memory);
    p.repetition_penalty = row_array<float>(f, "repetitionPenalty", rows, memory);
    p.presence_penalty = row_array<float>(f, "presencePenalty", rows, memory);
    p.frequency_penalty = row_array<float>(f, "frequencyPenalty", rows, memory);
    p.allow_bits = row_array<uint32_t>(f, "allow", rows * ((vocab + 31) / 32), memory);
    p.history_offsets = row_array<int32_t>(f, "historyOffsets", rows + 1, memory);
    p.history = row_array<int32_t>(f, "history", p.history_offsets ? p.history_offsets[rows] : -1, memory);
    p.seed = f.u64("seedLo", "seedHi");
    p.step = f.u64("stepLo", "stepHi");
    p.first_row = static_cast<uint64_t>(f.integer("firstRow"));
  });
}

namespace {

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
  c.params = sampler_settings(info[2], "sampling", c.rows, c.vocab, memory);
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
