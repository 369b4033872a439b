/* The library linked at run time reports the ABI its headers declare (docs/c-abi.md, the version rule). */
#include <stdio.h>

#include "grpo/grpo.h"

int main(void) {
  const int32_t version = grpo_abi_version();
  const int compatible = version / 1000 == GRPO_ABI_VERSION_MAJOR && version % 1000 >= GRPO_ABI_VERSION_MINOR;
  const int failures = (version != GRPO_ABI_VERSION) + !compatible;
  printf("c_abi_version: %s (library %d, headers %d)\n", failures ? "FAILED" : "passed", (int)version, GRPO_ABI_VERSION);
  return failures ? 1 : 0;
}
