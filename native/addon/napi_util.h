// Glue shared by every binding: typed-array views, status → JS error, sync/async dispatch.
// The TypeScript layer validates arguments and writes the messages users read; the checks
// here are a second line of defence so that no call can corrupt memory.
#pragma once

#include <napi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "grpo/grpo.h"

namespace grpo::addon {

// Errors cross into JS as "[status N] message"; lib/errors.ts turns them into GrpoErrors.
std::string status_message(grpo_status status, const std::string& message);
[[noreturn]] void throw_status(Napi::Env env, grpo_status status, const std::string& message);

template <typename T>
struct View {
  T* data = nullptr;
  int64_t length = 0;
};

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

// The typed array at info[index]; JS null/undefined gives an empty view when `optional`.
template <typename T>
View<T> view_arg(const Napi::CallbackInfo& info, size_t index, const char* name, bool optional = false) {
  Napi::Env env = info.Env();
  Napi::Value value = info[index];
  if (optional && (value.IsNull() || value.IsUndefined())) return {};
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != typed_array_type<T>())
    throw_status(env, GRPO_ERR_INVALID_ARGUMENT, std::string(name) + " is not a typed array of the expected element type");
  auto array = value.As<Napi::TypedArrayOf<T>>();
  return {array.Data(), static_cast<int64_t>(array.ElementLength())};
}

int64_t int_arg(const Napi::CallbackInfo& info, size_t index, const char* name);
double number_arg(const Napi::CallbackInfo& info, size_t index, const char* name);
bool bool_arg(const Napi::CallbackInfo& info, size_t index, const char* name);

// Throws unless view.length == expected (a defensive re-check of the TS validation).
template <typename T>
void expect_length(Napi::Env env, const View<T>& view, int64_t expected, const char* name) {
  if (view.length != expected)
    throw_status(env, GRPO_ERR_SHAPE,
                 std::string(name) + " has " + std::to_string(view.length) + " elements, expected " + std::to_string(expected));
}

// Runs `kernel` now (sync) or on the libuv pool (async, returns a Promise).
// `keep_alive` holds the JS arrays the kernel reads and writes until it has finished.
// The kernel returns a grpo_status; on failure grpo_last_error() of its thread is reported.
Napi::Value dispatch(const Napi::CallbackInfo& info, bool async, std::function<grpo_status()> kernel,
                     std::vector<Napi::Value> keep_alive);

}  // namespace grpo::addon
