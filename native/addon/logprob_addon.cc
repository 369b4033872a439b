// Bindings of the log-prob kernels. Outputs are caller-allocated typed arrays (lib/kernels/logprob.ts).
#include "grpo/logprob.h"
#include "napi_util.h"
#include "registry.h"

namespace grpo::addon {

namespace {

struct PlainArgs {
  View<float> logits;
  View<int32_t> targets;
  int64_t rows, vocab;
  grpo_logprob_options options;
};

// { temperature, ignoreIndex, chunkRows, chunkVocab }
void read_linear(Fields& f, grpo_linear_logprob_options& o) {
  read_scoring(f, o);
  o.chunk_rows = f.integer("chunkRows");
  o.chunk_vocab = f.integer("chunkVocab");
}

// (logits, targets, vocab, options, ...)
PlainArgs plain_args(const Napi::CallbackInfo& info) {
  PlainArgs a;
  a.logits = view_arg<float>(info, 0, "logits");
  a.targets = view_arg<int32_t>(info, 1, "targets");
  a.vocab = int_arg(info, 2, "vocab");
  a.rows = a.targets.length;
  a.options = read_struct<grpo_logprob_options>(info[3], "options", read_scoring<grpo_logprob_options>);
  expect_length(info.Env(), a.logits, a.rows * a.vocab, "logits");
  return a;
}

// (..., logp, entropy|null, lse|null, async)
Napi::Value logprob_forward(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  PlainArgs a = plain_args(info);
  auto logp = view_arg<float>(info, 4, "logp");
  auto entropy = view_arg<float>(info, 5, "entropy", true);
  auto lse = view_arg<float>(info, 6, "lse", true);
  expect_length(env, logp, a.rows, "logp");
  if (entropy.data) expect_length(env, entropy, a.rows, "entropy");
  if (lse.data) expect_length(env, lse, a.rows, "lse");
  CallMemory memory(bool_arg(info, 7, "async"));
  memory.inputs(a.logits, a.targets);
  memory.output(logp, "logp");
  memory.output(entropy, "entropy");
  memory.output(lse, "lse");
  return dispatch(info, std::move(memory), [=] {
    return grpo_logprob_forward_lse(a.logits.data, a.targets.data, a.rows, a.vocab, &a.options, logp.data, entropy.data,
                                    lse.data);
  });
}

// (..., gradLogp, gradEntropy|null, gradLogits, async[, lse|null, entropy|null]): with the forward's lse (and
// entropy), the backward reads each row once instead of first recomputing its statistics.
Napi::Value logprob_backward(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  PlainArgs a = plain_args(info);
  auto grad_logp = view_arg<float>(info, 4, "gradLogp");
  auto grad_entropy = view_arg<float>(info, 5, "gradEntropy", true);
  auto grad_logits = view_arg<float>(info, 6, "gradLogits");
  expect_length(env, grad_logp, a.rows, "gradLogp");
  if (grad_entropy.data) expect_length(env, grad_entropy, a.rows, "gradEntropy");
  expect_length(env, grad_logits, a.rows * a.vocab, "gradLogits");
  auto lse = view_arg<float>(info, 8, "lse", true);
  auto entropy = view_arg<float>(info, 9, "entropy", true);
  if (lse.data) expect_length(env, lse, a.rows, "lse");
  if (entropy.data) expect_length(env, entropy, a.rows, "entropy");
  CallMemory memory(bool_arg(info, 7, "async"));
  memory.inputs(a.logits, a.targets, grad_logp, grad_entropy, lse, entropy);
  memory.output(grad_logits, "gradLogits");
  return dispatch(info, std::move(memory), [=] {
    if (lse.data || entropy.data)
      return grpo_logprob_backward_saved(a.logits.data, a.targets.data, a.rows, a.vocab, &a.options, lse.data,
                                         entropy.data, grad_logp.data, grad_entropy.data, grad_logits.data);
    return grpo_logprob_backward(a.logits.data, a.targets.data, a.rows, a.vocab, &a.options, grad_logp.data,
                                 grad_entropy.data, grad_logits.data);
  });
}

// T: float (Float32Array hidden/weight) or uint16_t (Uint16Array of bfloat16 bits).
template <typename T>
struct LinearArgs {
  View<T> hidden, weight;
  View<float> bias;
  View<int32_t> targets;
  int64_t rows, hidden_size, vocab;
  grpo_linear_logprob_options options;
};

// The C ABI functions for each input type.
template <typename T>
struct LinearAbi;
template <>
struct LinearAbi<float> {
  static constexpr auto forward = &grpo_linear_logprob_forward;
  static constexpr auto backward = &grpo_linear_logprob_backward;
  static constexpr auto backward_saved = &grpo_linear_logprob_backward_saved;
  static constexpr auto forward_logits = &grpo_linear_logprob_forward_logits;
  static constexpr auto backward_logits = &grpo_linear_logprob_backward_logits;
};
template <>
struct LinearAbi<uint16_t> {
  static constexpr auto forward = &grpo_linear_logprob_forward_bf16;
  static constexpr auto backward = &grpo_linear_logprob_backward_bf16;
  static constexpr auto backward_saved = &grpo_linear_logprob_backward_saved_bf16;
  static constexpr auto forward_logits = &grpo_linear_logprob_forward_logits_bf16;
  static constexpr auto backward_logits = &grpo_linear_logprob_backward_logits_bf16;
};

// (hidden, weight, bias|null, targets, hiddenSize, options, ...)
template <typename T>
LinearArgs<T> linear_args(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LinearArgs<T> a;
  a.hidden = view_arg<T>(info, 0, "hidden");
  a.weight = view_arg<T>(info, 1, "weight");
  a.bias = view_arg<float>(info, 2, "bias", true);
  a.targets = view_arg<int32_t>(info, 3, "targets");
  a.hidden_size = int_arg(info, 4, "hiddenSize");
  a.options = read_struct<grpo_linear_logprob_options>(info[5], "options", read_linear);
  a.rows = a.targets.length;
  if (a.hidden_size < 1 || a.weight.length % a.hidden_size != 0)
    throw_status(env, GRPO_ERR_SHAPE, "weight length is not a multiple of hiddenSize");
  a.vocab = a.weight.length / a.hidden_size;
  expect_length(env, a.hidden, a.rows * a.hidden_size, "hidden");
  if (a.bias.data) expect_length(env, a.bias, a.vocab, "bias");
  return a;
}

// (..., logp, entropy|null, lse|null, async[, logits|null]): with logits [rows, vocab], the forward keeps them there.
template <typename T>
Napi::Value linear_logprob_forward(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LinearArgs<T> a = linear_args<T>(info);
  auto logp = view_arg<float>(info, 6, "logp");
  auto entropy = view_arg<float>(info, 7, "entropy", true);
  auto lse = view_arg<float>(info, 8, "lse", true);
  auto logits = view_arg<float>(info, 10, "logits", true);
  expect_length(env, logp, a.rows, "logp");
  if (entropy.data) expect_length(env, entropy, a.rows, "entropy");
  if (lse.data) expect_length(env, lse, a.rows, "lse");
  if (logits.data) expect_length(env, logits, a.rows * a.vocab, "logits");
  CallMemory memory(bool_arg(info, 9, "async"));
  memory.inputs(a.hidden, a.weight, a.bias, a.targets);
  memory.output(logp, "logp");
  memory.output(entropy, "entropy");
  memory.output(lse, "lse");
  memory.output(logits, "logits");
  return dispatch(info, std::move(memory),
                  [=] {
                    if (logits.data)
                      return LinearAbi<T>::forward_logits(a.hidden.data, a.weight.data, a.bias.data, a.targets.data,
                                                          a.rows, a.hidden_size, a.vocab, &a.options, logp.data,
                                                          entropy.data, lse.data, logits.data);
                    return LinearAbi<T>::forward(a.hidden.data, a.weight.data, a.bias.data, a.targets.data, a.rows,
                                                 a.hidden_size, a.vocab, &a.options, logp.data, entropy.data, lse.data);
                  });
}

// (..., gradLogp, gradEntropy|null, gradHidden, gradWeight, gradBias|null, accumulate, async[, lse|null, entropy|null,
// logits|null]): with the forward's lse (and entropy), the backward reuses them instead of its statistics pass; with
// its kept logits too, instead of recomputing each tile.
template <typename T>
Napi::Value linear_logprob_backward(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LinearArgs<T> a = linear_args<T>(info);
  auto grad_logp = view_arg<float>(info, 6, "gradLogp");
  auto grad_entropy = view_arg<float>(info, 7, "gradEntropy", true);
  auto grad_hidden = view_arg<float>(info, 8, "gradHidden");
  auto grad_weight = view_arg<float>(info, 9, "gradWeight");
  auto grad_bias = view_arg<float>(info, 10, "gradBias", true);
  const bool accumulate = bool_arg(info, 11, "accumulate");
  expect_length(env, grad_logp, a.rows, "gradLogp");
  if (grad_entropy.data) expect_length(env, grad_entropy, a.rows, "gradEntropy");
  expect_length(env, grad_hidden, a.rows * a.hidden_size, "gradHidden");
  expect_length(env, grad_weight, a.vocab * a.hidden_size, "gradWeight");
  if (grad_bias.data) expect_length(env, grad_bias, a.vocab, "gradBias");
  auto lse = view_arg<float>(info, 13, "lse", true);
  auto entropy = view_arg<float>(info, 14, "entropy", true);
  auto logits = view_arg<float>(info, 15, "logits", true);
  if (lse.data) expect_length(env, lse, a.rows, "lse");
  if (entropy.data) expect_length(env, entropy, a.rows, "entropy");
  if (logits.data) expect_length(env, logits, a.rows * a.vocab, "logits");
  CallMemory memory(bool_arg(info, 12, "async"));
  memory.inputs(a.hidden, a.weight, a.bias, a.targets, grad_logp, grad_entropy, lse, entropy, logits);
  memory.output(grad_hidden, "gradHidden");
  memory.output(grad_weight, "gradWeight");
  memory.output(grad_bias, "gradBias");
  return dispatch(info, std::move(memory),
                  [=] {
                    if (logits.data)
                      return LinearAbi<T>::backward_logits(a.hidden.data, a.weight.data, a.bias.data, a.targets.data,
                                                           a.rows, a.hidden_size, a.vocab, &a.options, lse.data,
                                                           entropy.data, logits.data, grad_logp.data, grad_entropy.data,
                                                           grad_hidden.data, grad_weight.data, grad_bias.data, accumulate);
                    if (lse.data || entropy.data)
                      return LinearAbi<T>::backward_saved(a.hidden.data, a.weight.data, a.bias.data, a.targets.data,
                                                          a.rows, a.hidden_size, a.vocab, &a.options, lse.data,
                                                          entropy.data, grad_logp.data, grad_entropy.data,
                                                          grad_hidden.data, grad_weight.data, grad_bias.data, accumulate);
                    return LinearAbi<T>::backward(a.hidden.data, a.weight.data, a.bias.data, a.targets.data, a.rows,
                                                  a.hidden_size, a.vocab, &a.options, grad_logp.data, grad_entropy.data,
                                                  grad_hidden.data, grad_weight.data, grad_bias.data, accumulate);
                  });
}

}  // namespace

void register_logprob(Napi::Env env, Napi::Object exports) {
  exports.Set("logprobForward", Napi::Function::New(env, logprob_forward));
  exports.Set("logprobBackward", Napi::Function::New(env, logprob_backward));
  exports.Set("linearLogprobForward", Napi::Function::New(env, linear_logprob_forward<float>));
  exports.Set("linearLogprobBackward", Napi::Function::New(env, linear_logprob_backward<float>));
  exports.Set("linearLogprobForwardBf16", Napi::Function::New(env, linear_logprob_forward<uint16_t>));
  exports.Set("linearLogprobBackwardBf16", Napi::Function::New(env, linear_logprob_backward<uint16_t>));
}

}  // namespace grpo::addon
