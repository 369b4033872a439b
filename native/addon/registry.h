// Each kernel family's binding file exports one register_* function; addon.cc calls them all.
#pragma once

#include <napi.h>

namespace grpo::addon {

void register_runtime(Napi::Env env, Napi::Object exports);
void register_logprob(Napi::Env env, Napi::Object exports);
void register_advantage(Napi::Env env, Napi::Object exports);
void register_loss(Napi::Env env, Napi::Object exports);
void register_gemm(Napi::Env env, Napi::Object exports);
void register_model(Napi::Env env, Napi::Object exports);
void register_lora(Napi::Env env, Napi::Object exports);  // the CPU addon only
void register_recompute(Napi::Env env, Napi::Object exports);  // the CPU addon only
void register_sampling(Napi::Env env, Napi::Object exports);

}  // namespace grpo::addon
