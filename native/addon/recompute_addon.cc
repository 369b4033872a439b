// Binding of the built-in model's per-layer activation recomputation (grpo/model.h, ABI 1.3): the CPU addon only.
// Calls on a model handle follow model_addon.cc's rules (refused while an async call on it is in flight).
#include "grpo/model.h"
#include "model_handle.h"
#include "registry.h"

namespace grpo::addon {

namespace {

// (model, enabled)
Napi::Value set_recompute(const Napi::CallbackInfo& info) {
  check(info.Env(), grpo_model_set_recompute(model_arg(info).get(), bool_arg(info, 1, "enabled") ? 1 : 0));
  return info.Env().Undefined();
}

}  // namespace

void register_recompute(Napi::Env env, Napi::Object exports) {
  exports.Set("modelSetRecompute", Napi::Function::New(env, set_recompute));
}

}  // namespace grpo::addon
