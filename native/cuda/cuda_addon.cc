// The CUDA N-API module: the CPU addon's glue files (logprob, advantage, sampling, loss, model), here linked against
// the CUDA implementations of their C ABI (the backend is chosen at link time: see CMakeLists.txt), plus
// cudaProbe() for the loader (lib/binding/cuda.ts) and
// cudaLastKernelMs() for the benchmarks. The glue's async rules hold here unchanged: async calls copy their inputs
// and stage their outputs (napi_util.h, CallMemory), and a model is shared with its calls in flight, so
// modelDispose never frees device memory a worker uses (model_addon.cc).
#include "grpo_cuda.h"
#include "napi_util.h"
#include "registry.h"

namespace {

// () -> { ok, deviceCount, error, message }: error is the cudaError (0 when a device is usable).
Napi::Value cuda_probe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  char message[256] = "";
  int count = 0;
  const int error = grpo_cuda_probe(&count, message, sizeof message);
  Napi::Object result = Napi::Object::New(env);
  result.Set("ok", error == 0 && count > 0);
  result.Set("deviceCount", count);
  result.Set("error", error);
  result.Set("message", message);
  return result;
}

// () -> GPU milliseconds of the last kernel call's kernels (copies excluded).
Napi::Value cuda_last_kernel_ms(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), grpo_cuda_last_kernel_ms());
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("cudaProbe", Napi::Function::New(env, cuda_probe));
  exports.Set("cudaLastKernelMs", Napi::Function::New(env, cuda_last_kernel_ms));
  grpo::addon::register_logprob(env, exports);
  grpo::addon::register_advantage(env, exports);
  grpo::addon::register_sampling(env, exports);
  grpo::addon::register_loss(env, exports);
  grpo::addon::register_model(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(grpo_native_cuda, init)
