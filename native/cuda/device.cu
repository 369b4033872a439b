#include "device.cuh"
#include "grpo_cuda.h"

#include <atomic>
#include <cstdio>
#include <limits>

namespace grpo::cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  const grpo_status code = status == cudaErrorMemoryAllocation ? GRPO_ERR_OUT_OF_MEMORY : GRPO_ERR_INTERNAL;
  fail(code, "CUDA %s failed: %s (cudaError %d)", what, cudaGetErrorString(status), static_cast<int>(status));
}

void check_launch(const char* kernel) {
  check(cudaGetLastError(), kernel);
  check(cudaDeviceSynchronize(), kernel);
}

int blocks_for(int64_t items, int threads) {
  const int64_t needed = (items + threads - 1) / threads;
  constexpr int64_t kMaxBlocks = 132 * 16;  // H200: 132 SMs; grid-stride loops cover the rest
  return static_cast<int>(needed < 1 ? 1 : needed < kMaxBlocks ? needed : kMaxBlocks);
}

RowFlag::RowFlag() : flag_(1) {
  const unsigned long long none = std::numeric_limits<unsigned long long>::max();
  check(cudaMemcpy(flag_.get(), &none, sizeof none, cudaMemcpyHostToDevice), "cudaMemcpy to device");
}

int64_t RowFlag::first() const {
  unsigned long long value = 0;
  flag_.download(&value);
  return value == std::numeric_limits<unsigned long long>::max() ? -1 : static_cast<int64_t>(value);
}

namespace {
std::atomic<double> last_kernel_ms{0.0};
}

KernelTimer::KernelTimer() {
  try {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
    check(cudaEventRecord(start_), "cudaEventRecord");
  } catch (...) {  // no destructor runs for a throwing constructor: release what was created
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
    throw;
  }
}

KernelTimer::~KernelTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void KernelTimer::stop() {
  check(cudaEventRecord(stop_), "cudaEventRecord");
  check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
  float ms = 0.0f;
  check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  last_kernel_ms = ms;
}

}  // namespace grpo::cuda

extern "C" double grpo_cuda_last_kernel_ms(void) { return grpo::cuda::last_kernel_ms; }

extern "C" int grpo_cuda_probe(int* device_count, char* message, int message_size) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);  // leaves count untouched on failure
  *device_count = status == cudaSuccess ? count : 0;
  if (status != cudaSuccess) {
    std::snprintf(message, message_size, "%s (cudaError %d)", cudaGetErrorString(status), static_cast<int>(status));
    return static_cast<int>(status);
  }
  if (count == 0) {
    std::snprintf(message, message_size, "no CUDA device (cudaError %d)", static_cast<int>(cudaErrorNoDevice));
    return static_cast<int>(cudaErrorNoDevice);
  }
  cudaDeviceProp props;
  const cudaError_t got = cudaGetDeviceProperties(&props, 0);
  if (got != cudaSuccess) {
    std::snprintf(message, message_size, "%s (cudaError %d)", cudaGetErrorString(got), static_cast<int>(got));
    return static_cast<int>(got);
  }
  std::snprintf(message, message_size, "%s (sm_%d%d, %d SMs, %.1f GiB)", props.name, props.major, props.minor,
                props.multiProcessorCount, static_cast<double>(props.totalGlobalMem) / (1 << 30));
  return 0;
}
