// Threads, CPU path and the memory-read probe used by the benchmarks.
#include <chrono>
#include <vector>

#include "grpo/grpo.h"
#include "napi_util.h"
#include "registry.h"

namespace grpo::addon {

namespace {

Napi::Value set_threads(const Napi::CallbackInfo& info) {
  const int64_t n = int_arg(info, 0, "threads");
  if (grpo_set_num_threads(static_cast<int>(n)) != GRPO_OK) throw_status(info.Env(), GRPO_ERR_VALUE_RANGE, grpo_last_error());
  return info.Env().Undefined();
}

Napi::Value get_threads(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), grpo_get_num_threads()); }

Napi::Value cpu_path(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), grpo_cpu_path()); }

}  // namespace

void register_runtime(Napi::Env env, Napi::Object exports) {
  exports.Set("setThreads", Napi::Function::New(env, set_threads));
  exports.Set("getThreads", Napi::Function::New(env, get_threads));
  exports.Set("cpuPath", Napi::Function::New(env, cpu_path));
}

}  // namespace grpo::addon
