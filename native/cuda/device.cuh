// Host-side helpers shared by the CUDA kernels: error checks that become grpo::Error (so every C ABI
// entry point reports a status and a message, as on the CPU), transient device buffers, launch sizes.
// This first version copies inputs in and outputs out on every call (no device-resident tensors).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/error.h"

namespace grpo::cuda {

// Throws grpo::Error naming the step and the CUDA error; allocation failures are GRPO_ERR_OUT_OF_MEMORY.
void check(cudaError_t status, const char* what);

// The launch errors and kernel faults of the work queued so far on the default stream.
void check_launch(const char* kernel);

// Grid-stride launches: enough blocks to fill the device, never more than the work needs.
constexpr int kThreads = 256;
int blocks_for(int64_t items, int threads = kThreads);

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int64_t count) : count_(count > 0 ? count : 0) {
    if (count_ > 0) check(cudaMalloc(reinterpret_cast<void**>(&data_), bytes()), "cudaMalloc");
  }
  // A device copy of host [count]; an empty buffer when host is NULL.
  DeviceBuffer(const T* host, int64_t count) : DeviceBuffer(host ? count : 0) { upload(host); }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return data_; }  // NULL when empty
  size_t bytes() const { return static_cast<size_t>(count_) * sizeof(T); }
  void upload(const T* host) {
    if (data_ && host) check(cudaMemcpy(data_, host, bytes(), cudaMemcpyHostToDevice), "cudaMemcpy to device");
  }
  void download(T* host) const {
    if (data_ && host) check(cudaMemcpy(host, data_, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  }
  void zero() {
    if (data_) check(cudaMemset(data_, 0, bytes()), "cudaMemset");
  }

 private:
  int64_t count_;
  T* data_ = nullptr;
};

// The first row a kernel flagged (NaN / +Infinity, out-of-range id ...), or -1: one int64 on the device
// that kernels lower with atomicMin, so the row reported is the same as the CPU's first bad row.
class RowFlag {
 public:
  RowFlag();
  unsigned long long* get() const { return flag_.get(); }
  int64_t first() const;  // -1 when no row was flagged

 private:
  DeviceBuffer<unsigned long long> flag_;
};

// Times the GPU work queued between construction and stop() with CUDA events (copies before and after
// excluded); stop() waits for it and publishes the milliseconds for grpo_cuda_last_kernel_ms().
class KernelTimer {
 public:
  KernelTimer();
  ~KernelTimer();
  KernelTimer(const KernelTimer&) = delete;
  KernelTimer& operator=(const KernelTimer&) = delete;
  void stop();

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace grpo::cuda
