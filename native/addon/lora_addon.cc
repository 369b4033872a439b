// Bindings of the built-in model's LoRA adapters (grpo/model.h, ABI 1.2): the CPU addon only. Calls on a model handle
// follow model_addon.cc's rules (refused while an async call on it is in flight).
#include "grpo/model.h"
#include "model_handle.h"
#include "napi_util.h"
#include "optimizer_bindings.h"
#include "registry.h"

namespace grpo::addon {

namespace {

void read_lora(Fields& f, grpo_lora_config& c) {
  c.rank = f.integer("rank");
  c.scale = f.f32("scale");
  c.dropout = f.f32("dropout");
  c.targets = static_cast<uint32_t>(f.integer("targets"));
  c.seed = static_cast<uint64_t>(f.integer("seed"));
  c.base16 = static_cast<int32_t>(f.integer("base16"));
}

// (model, { rank, scale, dropout, targets, seed, base16 }): base16 a grpo_base16
Napi::Value attach(const Napi::CallbackInfo& info) {
  const auto c = read_struct<grpo_lora_config>(info[1], "lora", read_lora);
  check(info.Env(), grpo_model_lora_attach(model_arg(info).get(), &c));
  return info.Env().Undefined();
}

// (model, enabled)
Napi::Value set_enabled(const Napi::CallbackInfo& info) {
  check(info.Env(), grpo_model_lora_set_enabled(model_arg(info).get(), bool_arg(info, 1, "enabled") ? 1 : 0));
  return info.Env().Undefined();
}

Napi::Value parameter_count(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(grpo_model_lora_num_parameters(handle_arg(info)->model.get())));
}

// The adapters' moments: (model, m, v) → step and (model, m, v, step).
using Optimizer = OptimizerBindings<grpo_model_lora_num_parameters, grpo_model_lora_get_optimizer, grpo_model_lora_set_optimizer>;

}  // namespace

void register_lora(Napi::Env env, Napi::Object exports) {
  exports.Set("modelLoraAttach", Napi::Function::New(env, attach));
  exports.Set("modelLoraSetEnabled", Napi::Function::New(env, set_enabled));
  exports.Set("modelLoraParameterCount", Napi::Function::New(env, parameter_count));
  exports.Set("modelLoraGetOptimizer", Napi::Function::New(env, Optimizer::get));
  exports.Set("modelLoraSetOptimizer", Napi::Function::New(env, Optimizer::set));
}

}  // namespace grpo::addon
