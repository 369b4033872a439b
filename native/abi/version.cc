#include "grpo/grpo.h"

extern "C" int32_t grpo_abi_version(void) { return GRPO_ABI_VERSION; }
