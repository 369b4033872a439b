#include "napi_util.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace grpo::addon {

const char* error_code(grpo_status status) {
  switch (status) {
    case GRPO_ERR_INVALID_ARGUMENT: return "GRPO_INVALID_ARGUMENT";
    case GRPO_ERR_SHAPE: return "GRPO_SHAPE_MISMATCH";
    case GRPO_ERR_NON_FINITE: return "GRPO_NON_FINITE";
    case GRPO_ERR_INDEX_RANGE: return "GRPO_INDEX_RANGE";
    case GRPO_ERR_VALUE_RANGE: return "GRPO_VALUE_RANGE";
    case GRPO_ERR_OUT_OF_MEMORY: return "GRPO_OUT_OF_MEMORY";
    case GRPO_ERR_UNSUPPORTED: return "GRPO_UNSUPPORTED";
    default: return "GRPO_INTERNAL";  // GRPO_ERR_INTERNAL, and a status this glue does not know
  }
}

Napi::Error coded_error(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  return error;
}

void throw_code(Napi::Env env, const char* code, const std::string& message) { throw coded_error(env, code, message); }

void throw_status(Napi::Env env, grpo_status status, const std::string& message) {
  throw_code(env, error_code(status), message);
}

namespace {

bool is_integer(Napi::Value value) {
  double number = value.IsNumber() ? value.As<Napi::Number>().DoubleValue() : NAN;
  return std::isfinite(number) && number == std::floor(number) && std::fabs(number) <= 9007199254740991.0;
}

}  // namespace

int64_t int_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  Napi::Value value = info[index];
  if (!is_integer(value)) throw_status(info.Env(), GRPO_ERR_INVALID_ARGUMENT, std::string(name) + " must be an integer");
  return static_cast<int64_t>(value.As<Napi::Number>().DoubleValue());
}

bool bool_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  Napi::Value value = info[index];
  if (!value.IsBoolean()) throw_status(info.Env(), GRPO_ERR_INVALID_ARGUMENT, std::string(name) + " must be a boolean");
  return value.As<Napi::Boolean>().Value();
}

Fields::Fields(Napi::Value value, std::string name) : name_(std::move(name)) {
  if (!value.IsObject() || value.IsArray() || value.IsTypedArray())
    throw_status(value.Env(), GRPO_ERR_INVALID_ARGUMENT, name_ + " must be a plain object");
  object_ = value.As<Napi::Object>();
}

void Fields::fail(const char* key, const char* expected) const {
  throw_status(object_.Env(), GRPO_ERR_INVALID_ARGUMENT, path(key) + " must be " + expected);
}

Napi::Value Fields::field(const char* key) {
  read_.emplace_back(key);
  Napi::Value value = object_.Get(key);
  if (value.IsUndefined())
    throw_status(object_.Env(), GRPO_ERR_INVALID_ARGUMENT, path(key) + " is missing");
  return value;
}

double Fields::number(const char* key) {
  Napi::Value value = field(key);
  if (!value.IsNumber()) fail(key, "a number");
  return value.As<Napi::Number>().DoubleValue();
}

int64_t Fields::integer(const char* key) {
  Napi::Value value = field(key);
  if (!is_integer(value)) fail(key, "an integer");
  return static_cast<int64_t>(value.As<Napi::Number>().DoubleValue());
}

int32_t Fields::i32(const char* key) {
  const int64_t value = integer(key);
  if (value < INT32_MIN || value > INT32_MAX) fail(key, "a 32-bit integer");
  return static_cast<int32_t>(value);
}

uint64_t Fields::u64(const char* low_key, const char* high_key) {
  const auto word = [&](const char* key) {
    const int64_t value = integer(key);
    if (value < 0 || value > UINT32_MAX) fail(key, "an integer in [0, 2^32)");
    return static_cast<uint64_t>(value);
  };
  const uint64_t low = word(low_key);
  return word(high_key) << 32 | low;
}

bool Fields::boolean(const char* key) {
  Napi::Value value = field(key);
  if (!value.IsBoolean()) fail(key, "a boolean");
  return value.As<Napi::Boolean>().Value();
}

int32_t Fields::choice_of(const char* key, const Choice* table, size_t count) {
  Napi::Value value = field(key);
  const std::string name = value.IsString() ? value.As<Napi::String>().Utf8Value() : "";
  std::string names;
  for (size_t i = 0; i < count; ++i) {
    if (value.IsString() && name == table[i].name) return table[i].value;
    names += (i ? ", \"" : "\"") + std::string(table[i].name) + "\"";
  }
  fail(key, ("one of " + names).c_str());
}

Fields Fields::object(const char* key) { return Fields(field(key), path(key)); }

void Fields::done() const {
  Napi::Array keys = object_.GetPropertyNames();
  for (uint32_t i = 0; i < keys.Length(); ++i) {
    const std::string key = keys.Get(i).ToString().Utf8Value();
    if (std::find(read_.begin(), read_.end(), key) == read_.end())
      throw_code(object_.Env(), "GRPO_UNKNOWN_OPTION", name_ + " has an unknown field \"" + key + "\"");
  }
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
  KernelWorker(Napi::Env env, CallMemory memory, std::function<grpo_status()> kernel, Result result)
      : Napi::AsyncWorker(env, "grpo-native kernel"),
        memory_(std::move(memory)),
        kernel_(std::move(kernel)),
        result_(std::move(result)),
        deferred_(Napi::Promise::Deferred::New(env)) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    status_ = kernel_();
    if (status_ != GRPO_OK) SetError(grpo_last_error());
  }

  // The kernel, and the model reference it may own, is released before the promise settles.
  void OnOK() override {
    kernel_ = nullptr;
    std::string message;
    if (!memory_.deliver(message))
      deferred_.Reject(coded_error(Env(), "GRPO_DETACHED_BUFFER", message).Value());
    else
      deferred_.Resolve(result_ ? result_(Env()) : Env().Undefined());
  }

  void OnError(const Napi::Error& error) override {
    kernel_ = nullptr;
    deferred_.Reject(coded_error(Env(), error_code(status_), error.Message()).Value());
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
  Result result_;
  grpo_status status_ = GRPO_OK;
  Napi::Promise::Deferred deferred_;
};

}  // namespace

Napi::Value dispatch(const Napi::CallbackInfo& info, CallMemory memory, std::function<grpo_status()> kernel, Result result) {
  Napi::Env env = info.Env();
  if (!memory.async()) {
    grpo_status status = kernel();
    if (status != GRPO_OK) throw_status(env, status, grpo_last_error());
    return result ? result(env) : env.Undefined();
  }
  auto* worker = new KernelWorker(env, std::move(memory), std::move(kernel), std::move(result));
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

}  // namespace grpo::addon
