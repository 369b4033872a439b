#include "napi_util.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

#include <cmath>
#include <cstdlib>
#include <cstring>

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

constexpr size_t kHugePage = size_t{2} << 20;

// Memory for a copy of `bytes`. Large copies go on transparent huge pages where the kernel allows it: faulting
// in fresh 4 KB pages costs more than the copy itself (a 300 MB input: 5x the memcpy).
unsigned char* allocate(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugePage) {
    void* block = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
    if (block) madvise(block, bytes, MADV_HUGEPAGE);
    return static_cast<unsigned char*>(block);
  }
#endif
  return static_cast<unsigned char*>(std::malloc(bytes > 0 ? bytes : 1));
}

}  // namespace

void* CallMemory::own(Napi::Env env, const void* source, size_t bytes) {
  for (auto& owned : owned_)
    if (owned.source == source && owned.bytes == bytes) return owned.copy.get();
  unsigned char* copy = allocate(bytes);
  if (!copy)
    throw_status(env, GRPO_ERR_OUT_OF_MEMORY, "no memory for the " + std::to_string(bytes) + "-byte copy an async call makes of its input");
  owned_.push_back({source, bytes, {copy, std::free}});
  if (bytes > 0) std::memcpy(owned_.back().copy.get(), source, bytes);
  return owned_.back().copy.get();
}

void* CallMemory::stage(const void* source, size_t bytes, Napi::Value array, const char* name) {
  void* data = own(array.Env(), source, bytes);
  staged_.push_back({Napi::Persistent(array), data, bytes, name});
  return data;
}

bool CallMemory::deliver(std::string& message) {
  for (auto& out : staged_) {
    auto array = out.array.Value().As<Napi::TypedArray>();
    Napi::ArrayBuffer buffer = array.ArrayBuffer();
    if (buffer.IsDetached() || array.ByteLength() != out.bytes) {
      message = out.name + " was detached or resized while the call ran (was its ArrayBuffer transferred?)";
      return false;
    }
    if (out.bytes > 0) std::memcpy(static_cast<unsigned char*>(buffer.Data()) + array.ByteOffset(), out.data, out.bytes);
  }
  return true;
}

namespace {

// Runs a kernel on the libuv pool; the kernel itself may fan out to the grpo thread pool.
class KernelWorker : public Napi::AsyncWorker {
 public:
  KernelWorker(Napi::Env env, CallMemory memory, std::function<grpo_status()> kernel)
      : Napi::AsyncWorker(env, "grpo-native kernel"),
        memory_(std::move(memory)),
        kernel_(std::move(kernel)),
        deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    grpo_status status = kernel_();
    if (status != GRPO_OK) SetError(status_message(status, grpo_last_error()));
  }

  // The kernel, and the model reference it may own, is released before the promise settles.
  void OnOK() override {
    kernel_ = nullptr;
    std::string message;
    if (memory_.deliver(message))
      deferred_.Resolve(Env().Undefined());
    else
      deferred_.Reject(Napi::Error::New(Env(), "[status " + std::to_string(kStatusDetached) + "] " + message).Value());
  }

  void OnError(const Napi::Error& error) override {
    kernel_ = nullptr;
    deferred_.Reject(error.Value());
  }

  // In an environment being torn down (worker.terminate() mid-call) settling the promise fails and
  // node-addon-api rethrows from outside any handler, which would abort the process: drop the result instead.
  void OnWorkComplete(Napi::Env env, napi_status status) override {
    try {
      Napi::AsyncWorker::OnWorkComplete(env, status);  // deletes this when it returns
    } catch (const Napi::Error&) {
      Destroy();
    }
  }

 private:
  CallMemory memory_;
  std::function<grpo_status()> kernel_;
  Napi::Promise::Deferred deferred_;
};

}  // namespace

Napi::Value dispatch(const Napi::CallbackInfo& info, CallMemory memory, std::function<grpo_status()> kernel) {
  Napi::Env env = info.Env();
  if (!memory.async()) {
    grpo_status status = kernel();
    if (status != GRPO_OK) throw_status(env, status, grpo_last_error());
    return env.Undefined();
  }
  auto* worker = new KernelWorker(env, std::move(memory), std::move(kernel));
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

}  // namespace grpo::addon
