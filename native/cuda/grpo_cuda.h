/* grpo-native CUDA backend: what the CUDA addon adds to the CPU C ABI.
 *
 * The CUDA addon implements the kernel entry points of native/include/grpo/{logprob,advantage,sampling}.h
 * under the same names and contracts, with host pointers: each call copies its inputs to the device,
 * runs there and copies the outputs back (no device-resident tensors yet). It is a separate module, so
 * these definitions never meet the CPU ones.
 */
#ifndef GRPO_CUDA_H
#define GRPO_CUDA_H

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when a device is usable (device_count > 0, message = "<name> (sm_XY, N SMs, G GiB)"); otherwise the
 * cudaError (35 = driver missing or too old, 100 = no device) with the reason in message. */
int grpo_cuda_probe(int* device_count, char* message, int message_size);

/* GPU milliseconds of the kernels of the last completed CUDA kernel call in this process (input and output
 * copies excluded); for benchmarks. */
double grpo_cuda_last_kernel_ms(void);

#ifdef __cplusplus
}
#endif

#endif /* GRPO_CUDA_H */
