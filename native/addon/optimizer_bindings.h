// The bindings of a set of parameters' AdamW moments, written once over the C calls that count the parameters and
// get and set m, v and the step: the model's (model_addon.cc) and its LoRA adapters' (lora_addon.cc).
#pragma once

#include <cstdint>

#include "grpo/model.h"
#include "model_handle.h"
#include "napi_util.h"

namespace grpo::addon {

template <int64_t (*Count)(const grpo_model*), grpo_status (*Get)(const grpo_model*, float*, float*, int64_t*),
          grpo_status (*Set)(grpo_model*, const float*, const float*, int64_t)>
struct OptimizerBindings {
  struct Moments {
    Model model;
    View<float> m, v;  // [Count(model)] each
  };

  // (model, m, v, ...)
  static Moments moments_args(const Napi::CallbackInfo& info) {
    Moments a{model_arg(info), view_arg<float>(info, 1, "m"), view_arg<float>(info, 2, "v")};
    expect_length(info.Env(), a.m, Count(a.model.get()), "m");
    expect_length(info.Env(), a.v, Count(a.model.get()), "v");
    return a;
  }

  // (model, m, v) → step
  static Napi::Value get(const Napi::CallbackInfo& info) {
    const Moments a = moments_args(info);
    int64_t step = 0;
    check(info.Env(), Get(a.model.get(), a.m.data, a.v.data, &step));
    return Napi::Number::New(info.Env(), static_cast<double>(step));
  }

  // (model, m, v, step)
  static Napi::Value set(const Napi::CallbackInfo& info) {
    const Moments a = moments_args(info);
    check(info.Env(), Set(a.model.get(), a.m.data, a.v.data, int_arg(info, 3, "step")));
    return info.Env().Undefined();
  }
};

}  // namespace grpo::addon
