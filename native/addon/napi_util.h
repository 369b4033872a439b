// Glue shared by every binding: typed-array views, status → JS error, sync/async dispatch.
// The TypeScript layer validates arguments and writes the messages users read; the checks
// here are a second line of defence so that no call can corrupt memory.
#pragma once

#include <napi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "grpo/grpo.h"

namespace grpo::addon {

// Errors cross into JS as Errors whose `code` names the GrpoErrorCode (lib/errors.ts makes them GrpoErrors).
// error_code() is the one status → code table.
const char* error_code(grpo_status status);
Napi::Error coded_error(Napi::Env env, const char* code, const std::string& message);
[[noreturn]] void throw_status(Napi::Env env, grpo_status status, const std::string& message);
[[noreturn]] void throw_code(Napi::Env env, const char* code, const std::string& message);

template <typename T>
struct View {
  T* data = nullptr;
  int64_t length = 0;
  Napi::Value array;    // the JS typed array (empty for an absent optional argument)
  bool shared = false;  // on a SharedArrayBuffer, which can be neither detached nor shrunk
};

// A view of `array` (a typed array of element type T).
template <typename T>
View<T> view_of(Napi::TypedArrayOf<T> array) {
  Napi::Value buffer = array.ArrayBuffer();
  return {array.Data(), static_cast<int64_t>(array.ElementLength()), array, !buffer.IsArrayBuffer()};
}

template <typename T>
constexpr napi_typedarray_type typed_array_type() {
  static_assert(std::is_same<T, float>::value || std::is_same<T, int32_t>::value || std::is_same<T, uint8_t>::value ||
                    std::is_same<T, uint16_t>::value || std::is_same<T, uint32_t>::value ||
                    std::is_same<T, double>::value,
                "unsupported element type");
  return std::is_same<T, float>::value     ? napi_float32_array
         : std::is_same<T, int32_t>::value ? napi_int32_array
         : std::is_same<T, uint8_t>::value ? napi_uint8_array
         : std::is_same<T, uint16_t>::value ? napi_uint16_array  // bfloat16 bit patterns
         : std::is_same<T, uint32_t>::value ? napi_uint32_array
                                            : napi_float64_array;
}

// The typed array `value` (named `name` in errors); JS null/undefined gives an empty view when `optional`.
template <typename T>
View<T> view_of_value(Napi::Env env, Napi::Value value, const std::string& name, bool optional) {
  if (optional && (value.IsNull() || value.IsUndefined())) return {};
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != typed_array_type<T>())
    throw_status(env, GRPO_ERR_INVALID_ARGUMENT, name + " is not a typed array of the expected element type");
  return view_of(value.As<Napi::TypedArrayOf<T>>());
}

// The typed array at info[index]; JS null/undefined gives an empty view when `optional`.
template <typename T>
View<T> view_arg(const Napi::CallbackInfo& info, size_t index, const char* name, bool optional = false) {
  return view_of_value<T>(info.Env(), info[index], name, optional);
}

int64_t int_arg(const Napi::CallbackInfo& info, size_t index, const char* name);
bool bool_arg(const Napi::CallbackInfo& info, size_t index, const char* name);

// Throws unless view.length == expected (a defensive re-check of the TS validation).
template <typename T>
void expect_length(Napi::Env env, const View<T>& view, int64_t expected, const char* name) {
  if (view.length != expected)
    throw_status(env, GRPO_ERR_SHAPE,
                 std::string(name) + " has " + std::to_string(view.length) + " elements, expected " + std::to_string(expected));
}

// One value of a C enum under the string name it crosses the boundary with (one table per enum, in its glue).
struct Choice {
  const char* name;
  int32_t value;
};

// The fields of one plain JS options object, read by name into a C struct. A missing field or one of the wrong
// type is GRPO_INVALID_ARGUMENT naming it ("options.epsilonLow must be a number"); done() rejects a key that
// was never read (a misspelt or unknown field) with GRPO_UNKNOWN_OPTION, so the TS side and the C struct cannot
// drift apart silently.
class Fields {
 public:
  Fields(Napi::Value value, std::string name);

  double number(const char* key);
  float f32(const char* key) { return static_cast<float>(number(key)); }
  int64_t integer(const char* key);
  int32_t i32(const char* key);
  bool boolean(const char* key);
  template <size_t N>
  int32_t choice(const char* key, const Choice (&table)[N]) {
    return choice_of(key, table, N);
  }
  // A nested options object (e.g. options.vespo); call done() on it too.
  Fields object(const char* key);
  // The 64-bit unsigned integer of two 32-bit words (JS numbers are exact to 2^53 only).
  uint64_t u64(const char* low_key, const char* high_key);
  // The typed array in the field, or an empty view when it is null and `nullable`.
  template <typename T>
  View<T> array(const char* key, bool nullable = false);
  Napi::Env env() const { return object_.Env(); }
  // The field's value as it is (for a reader of its own, e.g. the sampler settings), which must be present.
  Napi::Value field(const char* key);
  // Throws unless every key of the object has been read.
  void done() const;

 private:
  int32_t choice_of(const char* key, const Choice* table, size_t count);
  std::string path(const char* key) const { return name_ + "." + key; }
  [[noreturn]] void fail(const char* key, const char* expected) const;

  Napi::Object object_;
  std::string name_;
  std::vector<std::string> read_;
};

template <typename T>
View<T> Fields::array(const char* key, bool nullable) {
  return view_of_value<T>(object_.Env(), field(key), path(key), nullable);
}

// The plain object `value` (named `name` in errors) read into a zeroed Struct by `read(fields, struct)`; then
// every key must have been read.
template <typename Struct, typename Read>
Struct read_struct(Napi::Value value, const char* name, Read read) {
  Fields fields(value, name);
  Struct out{};
  read(fields, out);
  fields.done();
  return out;
}

// { temperature, ignoreIndex }: the scoring fields of grpo_logprob_options, grpo_linear_logprob_options and
// grpo_score_options.
template <typename Options>
void read_scoring(Fields& f, Options& o) {
  o.temperature = f.f32("temperature");
  o.ignore_index = f.i32("ignoreIndex");
}

// The memory one kernel call reads and writes (docs/policy.md, "Async calls and memory").
// Sync: the kernel works on the caller's typed arrays in place (zero copy).
// Async: the worker never touches memory a JS ArrayBuffer owns, because a transfer (postMessage, structuredClone)
// detaches an ArrayBuffer and may free its memory even while a reference to the array is held. Inputs are copied
// into buffers the call owns when it is made; outputs are staged in owned buffers (starting as copies of the
// arrays, so what the kernel leaves unwritten reads as in a sync call) and copied into the arrays on the main
// thread once the kernel has finished. Arrays on a SharedArrayBuffer (never detached, never shrunk, alive while
// referenced) are read and written in place, under a reference held until the call settles.
class CallMemory {
 public:
  explicit CallMemory(bool async) : async_(async) {}

  // In an async call, points `view` at a copy of its array that the call owns.
  template <typename T>
  void input(View<T>& view) {
    if (!async_ || !view.data) return;
    if (view.shared)
      hold(view.array);
    else
      view.data = static_cast<T*>(own(view.array.Env(), view.data, bytes_of(view)));
  }

  template <typename... Views>
  void inputs(Views&... views) {
    (input(views), ...);
  }

  // In an async call, points `view` at a staging copy that is written to its array (named `name` in errors) when
  // the kernel has finished. An output given as one of the inputs (in place, e.g. `out: logits`) shares that
  // input's copy, so the kernel sees the aliasing a sync call sees.
  template <typename T>
  void output(View<T>& view, const char* name) {
    if (!async_ || !view.data) return;
    if (view.shared)
      hold(view.array);
    else
      view.data = static_cast<T*>(stage(view.data, bytes_of(view), view.array, name));
  }

  bool async() const { return async_; }

  // Main thread, after the kernel: copies the staged outputs into their arrays. Returns false and names the
  // array in `message` when one was detached or resized meanwhile.
  bool deliver(std::string& message);

 private:
  struct Staged {
    Napi::Reference<Napi::Value> array;
    void* data;
    size_t bytes;
    std::string name;
  };

  template <typename T>
  static size_t bytes_of(const View<T>& view) {
    return static_cast<size_t>(view.length) * sizeof(T);
  }

  struct Owned {
    const void* source;  // the JS memory it copies (compared, never read after the call is made)
    size_t bytes;
    std::unique_ptr<unsigned char, void (*)(void*)> copy;
  };

  void* own(Napi::Env env, const void* source, size_t bytes);
  void* stage(const void* source, size_t bytes, Napi::Value array, const char* name);
  void hold(Napi::Value array) { held_.push_back(Napi::Persistent(array)); }

  bool async_;
  std::vector<Owned> owned_;
  std::vector<Staged> staged_;
  std::vector<Napi::Reference<Napi::Value>> held_;  // shared arrays used in place
};

// Builds a call's JS result on the main thread once its kernel has succeeded (e.g. its stats as a named object).
using Result = std::function<Napi::Value(Napi::Env)>;

// Runs `kernel` now (sync: returns result()) or on the libuv pool (async: returns a Promise resolved with result()
// once the staged outputs are in their arrays); no `result` gives undefined. The kernel must reach memory only
// through pointers `memory` handed out, or memory it owns. The kernel returns a grpo_status; on failure
// grpo_last_error() of its thread is reported.
Napi::Value dispatch(const Napi::CallbackInfo& info, CallMemory memory, std::function<grpo_status()> kernel,
                     Result result = nullptr);

}  // namespace grpo::addon
