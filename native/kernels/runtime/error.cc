#include "error.h"

#include <cstdio>

namespace grpo {

namespace {
thread_local std::string last_error;
}

void fail(grpo_status status, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  throw Error(status, message);
}

void set_last_error(const char* message) noexcept {
  try {
    last_error = message;
  } catch (...) {
    // Out of memory while storing the message: keep the previous one.
  }
}

}  // namespace grpo

extern "C" const char* grpo_last_error(void) { return grpo::last_error.c_str(); }
