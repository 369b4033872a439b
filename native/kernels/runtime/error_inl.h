#pragma once

#include <new>

namespace grpo {

template <typename Body>
grpo_status guarded(Body&& body) noexcept {
  try {
    body();
    set_last_error("");
    return GRPO_OK;
  } catch (const Error& error) {
    set_last_error(error.what());
    return error.status;
  } catch (const std::bad_alloc&) {
    set_last_error("out of memory");
    return GRPO_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& error) {
    set_last_error(error.what());
    return GRPO_ERR_INTERNAL;
  } catch (...) {
    set_last_error("unknown internal error");
    return GRPO_ERR_INTERNAL;
  }
}

}  // namespace grpo
