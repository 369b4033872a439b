// Internal to the GEMM: the register-tile micro-kernels and the driver that runs any of them.
// Each micro-kernel multiplies one packed A micro-panel [kc, mr] by one packed B micro-panel
// [kc, nr], summing k = 0 .. kc-1 in order from zero, and writes
//   C[0:rows, 0:cols] = alpha · acc + beta · C        (beta == 0 ignores C)
// Kernels with `edges` handle rows < mr and cols < nr themselves; for the others the driver
// runs partial tiles through a scratch tile.
// This header includes nothing from the standard library so that the SIMD translation units,
// compiled with wider target attributes, define no std inline functions (ODR / SIGILL safety).
#pragma once

#include <stdint.h>

namespace grpo::gemm_detail {

using TileFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta,
                        int rows, int cols);

// panel[k · width + i] = src[i · ld + k] for i < count, k < kc; zero for count <= i < width.
// Packs rows of a stored matrix whose rows run along k (A, or Bᵀ when B is transposed).
using TransposeFn = void (*)(const float* src, int64_t ld, int count, int64_t kc, int width, float* panel);

// pairs[p · width + i] = the bfloat16 values of panel[2p · width + i] and panel[(2p+1) · width + i]
// in one 32-bit word (kc even): the panel layout of the bf16 kernels.
using PairFn = void (*)(const float* panel, int64_t kc, int width, float* pairs);

struct TileKernel {
  const char* name;  // "avx512", "avx2" or "generic" (the grpo_cpu_path names)
  int mr, nr;        // register tile of C: mr rows × nr columns
  bool edges;        // handles rows < mr and cols < nr
  TileFn run;
  TransposeFn pack_transposed;
  PairFn to_pairs;  // null for float32 panels
};

// The plain TransposeFn (gemm.cc).
void pack_transposed_generic(const float* src, int64_t ld, int count, int64_t kc, int width, float* panel);

// Kernel tables per path; a path's kernel may only run where grpo_cpu_path() allows it.
TileKernel avx512_kernel();   // 14 × 32, masked edges
TileKernel avx2_kernel();     // 6 × 16
TileKernel generic_kernel();  // 6 × 16, plain C++
TileKernel avx512_bf16_kernel();  // 14 × 32 over bf16 k-pairs (vdpbf16ps), float32 sums

// The kernel of the best path this CPU supports; for gemm_bf16, the BF16 kernel or null.
const TileKernel& best_kernel();
const TileKernel* best_bf16_kernel();

// grpo::gemm with an explicit kernel (tests run every path the CPU supports).
void gemm_with(const TileKernel& kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
               const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace grpo::gemm_detail
