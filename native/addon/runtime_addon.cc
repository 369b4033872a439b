// Threads, CPU path and the memory-read probe used by the benchmarks.
#include <chrono>
#include <vector>

#include "grpo/grpo.h"
#include "napi_util.h"
#include "registry.h"
#include "runtime/roofline.h"

namespace grpo::addon {

namespace {

Napi::Value set_threads(const Napi::CallbackInfo& info) {
  const int64_t n = int_arg(info, 0, "threads");
  if (grpo_set_num_threads(static_cast<int>(n)) != GRPO_OK) throw_status(info.Env(), GRPO_ERR_VALUE_RANGE, grpo_last_error());
  return info.Env().Undefined();
}

Napi::Value get_threads(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), grpo_get_num_threads()); }

Napi::Value cpu_path(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), grpo_cpu_path()); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// (data: Float32Array) -> seconds to stream it once through the pool
Napi::Value probe_read(const Napi::CallbackInfo& info) {
  auto data = view_arg<float>(info, 0, "data");
  const auto start = std::chrono::steady_clock::now();
  volatile double checksum = stream_read(data.data, data.length);
  (void)checksum;
  return Napi::Number::New(info.Env(), seconds_since(start));
}

// (iterations) -> { seconds, flops }
Napi::Value probe_fma(const Napi::CallbackInfo& info) {
  const int64_t iterations = int_arg(info, 0, "iterations");
  const auto start = std::chrono::steady_clock::now();
  const double flops = fma_burn(iterations);
  Napi::Object result = Napi::Object::New(info.Env());
  result.Set("seconds", seconds_since(start));
  result.Set("flops", flops);
  return result;
}

}  // namespace

void register_runtime(Napi::Env env, Napi::Object exports) {
  exports.Set("setThreads", Napi::Function::New(env, set_threads));
  exports.Set("getThreads", Napi::Function::New(env, get_threads));
  exports.Set("cpuPath", Napi::Function::New(env, cpu_path));
  exports.Set("probeRead", Napi::Function::New(env, probe_read));
  exports.Set("probeFma", Napi::Function::New(env, probe_fma));
}

}  // namespace grpo::addon
