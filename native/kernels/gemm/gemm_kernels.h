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

// A kernel's own packer: op(X) rows i < count (of the panel's width) over k < kc, straight from the stored
// matrix into the kernel's panel, zero past count and kc. src is op(X)[0, 0]; op(X)[i, k] is src[i · ld + k]
// when along_k (the stored rows run along k), else src[k · ld + i].
using PackFn = void (*)(const float* src, int64_t ld, bool along_k, int count, int64_t kc, float* panel);

struct TileKernel {
  const char* name;  // "avx512", "avx2", "generic" (the grpo_cpu_path names), "avx512_bf16" or "amx_bf16"
  int mr, nr;        // register tile of C: mr rows × nr columns
  bool edges;        // handles rows < mr and cols < nr
  TileFn run;
  TransposeFn pack_transposed;
  PairFn to_pairs;  // null for float32 panels
  int k_block = 1;  // panels hold k zero-padded to a multiple of this (2 for bf16 k-pairs, 32 for AMX tiles)
  // Null but for AMX: its packers of A and B panels (else pack_transposed, then to_pairs), and the per-thread
  // state (its tile configuration) that enter sets up before a thread runs a block of tiles and leave clears.
  PackFn pack_a = nullptr, pack_b = nullptr;
  void (*enter)() = nullptr;
  void (*leave)() = nullptr;
};

// The plain TransposeFn (gemm.cc).
void pack_transposed_generic(const float* src, int64_t ld, int count, int64_t kc, int width, float* panel);

// Kernel tables per path; a path's kernel may only run where grpo_cpu_path() allows it.
TileKernel avx512_kernel();   // 14 × 32, masked edges
TileKernel avx2_kernel();     // 6 × 16
TileKernel generic_kernel();  // 6 × 16, plain C++
TileKernel avx512_bf16_kernel();  // 14 × 32 over bf16 k-pairs (vdpbf16ps), float32 sums
TileKernel amx_bf16_kernel();     // 32 × 32 in AMX tiles (tdpbf16ps), float32 sums; only where amx_bf16_usable()

// The kernel of the best path this CPU supports; for gemm_bf16, the AMX or else the AVX512_BF16 kernel, or null.
const TileKernel& best_kernel();
const TileKernel* best_bf16_kernel();

// grpo::gemm with an explicit kernel (tests run every path the CPU supports).
void gemm_with(const TileKernel& kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
               const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace grpo::gemm_detail
