// A resizable device array (grows, never shrinks until released): the model's resident tensors and the
// activation buffers that are reused from step to step.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "device.cuh"

namespace grpo::cuda::model {

template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(int64_t n) { resize(n); }
  ~DeviceArray() { release(); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept { swap(o); }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    swap(o);
    return *this;
  }
  void swap(DeviceArray& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }

  T* get() const { return data_; }
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Contents are undefined after growing.
  void resize(int64_t n) {
    if (n > capacity_) {
      release();
      check(cudaMalloc(reinterpret_cast<void**>(&data_), sizeof(T) * static_cast<size_t>(n)), "cudaMalloc");
      capacity_ = n;
    }
    size_ = n;
  }
  void assign_zero(int64_t n) {
    resize(n);
    if (n > 0) check(cudaMemset(data_, 0, sizeof(T) * static_cast<size_t>(n)), "cudaMemset");
  }
  void upload(const T* host, int64_t n) {
    resize(n);
    if (n > 0) check(cudaMemcpy(data_, host, sizeof(T) * static_cast<size_t>(n), cudaMemcpyHostToDevice), "cudaMemcpy to device");
  }
  void download(T* host) const {
    if (size_ > 0) check(cudaMemcpy(host, data_, sizeof(T) * static_cast<size_t>(size_), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  }
  void copy_from(const DeviceArray& o) {
    resize(o.size_);
    if (size_ > 0) check(cudaMemcpy(data_, o.data_, sizeof(T) * static_cast<size_t>(size_), cudaMemcpyDeviceToDevice), "cudaMemcpy on device");
  }
  void release() {
    if (data_) cudaFree(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

 private:
  T* data_ = nullptr;
  int64_t size_ = 0, capacity_ = 0;
};

}  // namespace grpo::cuda::model
