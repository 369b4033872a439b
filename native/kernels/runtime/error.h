// Errors inside the C++ core: kernels throw grpo::Error, and each C ABI entry point
// converts it to a grpo_status plus a thread-local message with grpo::guarded().
#pragma once

#include <cstdarg>
#include <stdexcept>
#include <string>

#include "grpo/grpo.h"

namespace grpo {

struct Error : std::runtime_error {
  grpo_status status;
  Error(grpo_status status, const std::string& message) : std::runtime_error(message), status(status) {}
};

[[noreturn]] void fail(grpo_status status, const char* format, ...) __attribute__((format(printf, 2, 3)));

// Runs `body`, converting any exception into a status and the thread's last-error message.
template <typename Body>
grpo_status guarded(Body&& body) noexcept;

void set_last_error(const char* message) noexcept;

}  // namespace grpo

#include "error_inl.h"
