// The JS handle of a built-in model, shared by the model's bindings (model_addon.cc, lora_addon.cc, recompute_addon.cc):
// a JS External holding a grpo_model* shared with the async calls in flight on it (model_addon.cc explains the lifetime).
#pragma once

#include <memory>

#include "grpo/model.h"
#include "napi_util.h"

namespace grpo::addon {

using Model = std::shared_ptr<grpo_model>;

struct Handle {
  Model model;  // empty once disposed
};

inline Napi::Value wrap(Napi::Env env, grpo_model* model) {
  return Napi::External<Handle>::New(env, new Handle{Model(model, grpo_model_destroy)}, [](Napi::Env, Handle* h) { delete h; });
}

inline Handle* handle_arg(const Napi::CallbackInfo& info) {
  if (!info[0].IsExternal()) throw_status(info.Env(), GRPO_ERR_INVALID_ARGUMENT, "model is not a model handle");
  Handle* h = info[0].As<Napi::External<Handle>>().Data();
  if (!h->model) throw_status(info.Env(), GRPO_ERR_INVALID_ARGUMENT, "the model has been disposed");
  return h;
}

// The model of info[0] for a call that reads or writes its state: refused while an async call on it is in
// flight (each holds a reference, so the count is above one). Async calls keep the returned reference.
inline Model model_arg(const Napi::CallbackInfo& info) {
  Handle* h = handle_arg(info);
  if (h->model.use_count() > 1)
    throw_status(info.Env(), GRPO_ERR_INVALID_ARGUMENT, "the model is busy with an async call: await it first");
  return h->model;
}

inline void check(Napi::Env env, grpo_status status) {
  if (status != GRPO_OK) throw_status(env, status, grpo_last_error());
}

}  // namespace grpo::addon
