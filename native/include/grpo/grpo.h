/* grpo-native C ABI: status codes, error messages, threads.
 *
 * Every kernel entry point returns a grpo_status. On failure, grpo_last_error()
 * returns a message for the calling thread naming the argument and the problem.
 * Kernels never abort or exit on bad input; they return a status.
 * Arrays are row-major float32 / int32, passed as plain pointers plus shapes.
 */
#ifndef GRPO_GRPO_H
#define GRPO_GRPO_H

#include <stdint.h>

/* The ABI these headers describe (docs/c-abi.md): the major grows with every incompatible change (a function,
 * struct layout or enum value changed or removed) and names the shared library, libgrpo_native.so.<major>;
 * the minor grows with every addition. */
#define GRPO_ABI_VERSION_MAJOR 2
#define GRPO_ABI_VERSION_MINOR 2
#define GRPO_ABI_VERSION (GRPO_ABI_VERSION_MAJOR * 1000 + GRPO_ABI_VERSION_MINOR)

#ifdef __cplusplus
extern "C" {
#endif

/* GRPO_ABI_VERSION of the library running: usable with these headers when v / 1000 == GRPO_ABI_VERSION_MAJOR
 * and v % 1000 >= GRPO_ABI_VERSION_MINOR. */
int32_t grpo_abi_version(void);

typedef enum grpo_status {
  GRPO_OK = 0,
  GRPO_ERR_INVALID_ARGUMENT = 1, /* null pointer, unknown enum value */
  GRPO_ERR_SHAPE = 2,            /* sizes that disagree or overflow */
  GRPO_ERR_NON_FINITE = 3,       /* NaN or +Infinity in an input that must be finite */
  GRPO_ERR_INDEX_RANGE = 4,      /* an index (token id, segment id, group id) out of range */
  GRPO_ERR_VALUE_RANGE = 5,      /* a scalar option outside its allowed range */
  GRPO_ERR_OUT_OF_MEMORY = 6,
  GRPO_ERR_INTERNAL = 7,
  GRPO_ERR_UNSUPPORTED = 8
} grpo_status;

/* Message of the last failed call made on this thread ("" if none). Valid until the next call. */
const char* grpo_last_error(void);

/* Size of the kernel thread pool. n <= 0 selects the number of available cores. */
grpo_status grpo_set_num_threads(int n);
int grpo_get_num_threads(void);

/* The SIMD path chosen at run time for this CPU: "avx512", "avx2" or "generic". */
const char* grpo_cpu_path(void);

#ifdef __cplusplus
}
#endif

#endif /* GRPO_GRPO_H */
