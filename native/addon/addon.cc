// The N-API module: glue only. Math lives in native/kernels behind the C ABI.
#include "registry.h"

namespace {

Napi::Object init(Napi::Env env, Napi::Object exports) {
  grpo::addon::register_runtime(env, exports);
  grpo::addon::register_logprob(env, exports);
  grpo::addon::register_advantage(env, exports);
  grpo::addon::register_loss(env, exports);
  grpo::addon::register_gemm(env, exports);
  grpo::addon::register_model(env, exports);
  grpo::addon::register_lora(env, exports);
  grpo::addon::register_recompute(env, exports);
  grpo::addon::register_sampling(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(grpo_native, init)
