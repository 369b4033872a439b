// An allocator for the large buffers a decoding step sweeps (the KV cache): from 2 MB on, 2 MB-aligned and
// advised to the kernel as transparent huge pages (where THP is "madvise", the default of many distributions,
// large buffers get 4 KB pages otherwise), so that reading hundreds of MB is not a TLB miss every 4 KB.
// Without THP the advice is ignored and the buffer is an ordinary aligned allocation.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace grpo {

constexpr size_t kHugePage = size_t{2} << 20;

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T) - kHugePage) throw std::bad_alloc();
    const bool huge = n * sizeof(T) >= kHugePage;
    const size_t align = huge ? kHugePage : 64, bytes = (n * sizeof(T) + align - 1) / align * align;
    void* p = std::aligned_alloc(align, bytes);
    if (!p) throw std::bad_alloc();
    if (huge) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: a failure leaves ordinary pages
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

}  // namespace grpo
