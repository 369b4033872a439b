#include "napi_util.h"

#include <cmath>

namespace grpo::addon {

std::string status_message(grpo_status status, const std::string& message) {
  return "[status " + std::to_string(static_cast<int>(status)) + "] " + message;
}

void throw_status(Napi::Env env, grpo_status status, const std::string& message) {
  throw Napi::Error::New(env, status_message(status, message));
}

int64_t int_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  Napi::Value value = info[index];
  double number = value.IsNumber() ? value.As<Napi::Number>().DoubleValue() : NAN;
  if (!std::isfinite(number) || number != std::floor(number) || std::fabs(number) > 9007199254740991.0)
    throw_status(info.Env(), GRPO_ERR_INVALID_ARGUMENT, std::string(name) + " must be an integer");
  return static_cast<int64_t>(number);
}

double number_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  Napi::Value value = info[index];
  if (!value.IsNumber()) throw_status(info.Env(), GRPO_ERR_INVALID_ARGUMENT, std::string(name) + " must be a number");
  return value.As<Napi::Number>().DoubleValue();
}

bool bool_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  Napi::Value value = info[index];
  if (!value.IsBoolean()) throw_status(info.Env(), GRPO_ERR_INVALID_ARGUMENT, std::string(name) + " must be a boolean");
  return value.As<Napi::Boolean>().Value();
}

namespace {

// Runs a kernel on the libuv pool; the kernel itself may fan out to the grpo thread pool.
class KernelWorker : public Napi::AsyncWorker {
 public:
  KernelWorker(Napi::Env env, std::function<grpo_status()> kernel, std::vector<Napi::Value> keep_alive)
      : Napi::AsyncWorker(env, "grpo-native kernel"), kernel_(std::move(kernel)), deferred_(Napi::Promise::Deferred::New(env)) {
    for (auto& value : keep_alive)
      if (value.IsObject()) refs_.push_back(Napi::Persistent(value));  // null/undefined need no reference
  }

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    grpo_status status = kernel_();
    if (status != GRPO_OK) SetError(status_message(status, grpo_last_error()));
  }

  void OnOK() override { deferred_.Resolve(Env().Undefined()); }
  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

 private:
  std::function<grpo_status()> kernel_;
  Napi::Promise::Deferred deferred_;
  std::vector<Napi::Reference<Napi::Value>> refs_;
};

}  // namespace

Napi::Value dispatch(const Napi::CallbackInfo& info, bool async, std::function<grpo_status()> kernel,
                     std::vector<Napi::Value> keep_alive) {
  Napi::Env env = info.Env();
  if (!async) {
    grpo_status status = kernel();
    if (status != GRPO_OK) throw_status(env, status, grpo_last_error());
    return env.Undefined();
  }
  auto* worker = new KernelWorker(env, std::move(kernel), std::move(keep_alive));
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

}  // namespace grpo::addon
