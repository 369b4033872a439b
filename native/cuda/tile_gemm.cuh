// GEMMs on tensor cores for the fused LM head and the built-in model (the toolkit ships no cuBLAS headers):
//   C[M,N] = alpha · op(A) · op(B) + beta · C     row-major device pointers, op(X) = Xᵀ when trans_x
// as the CPU's grpo_sgemm (native/include/grpo/gemm.h); beta = 0 ignores C. All sums are float32.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace grpo::cuda {

// How tile_gemm multiplies float inputs.
enum class GemmPrecision {
  // Each float is split into a TF32 high part and a TF32 remainder, and three WMMA products
  // (hi·hi + hi·lo + lo·hi) recover about float32 accuracy (the "3xTF32" scheme of CUTLASS), where
  // plain TF32 would round inputs to 10 bits. sm_75 (no TF32 tensor cores) runs float FMAs.
  kFloat32,
  // A and B are rounded to bfloat16 (nearest even) as they are loaded and multiplied by tile_gemm_bf16:
  // the bf16 tensor-core rate (one product instead of three, twice the TF32 rate) at bf16 input
  // precision (8 significant bits), float32 sums. For the bf16 matmuls of the built-in model: the
  // weights and activations stay float32 in memory, no bf16 copy is made.
  kBf16,
};

void tile_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc,
               GemmPrecision precision = GemmPrecision::kFloat32);

// The bf16 tensor-core GEMM (WMMA m16n16k16 bf16 with float32 accumulators on sm_80 and newer; sm_75 runs
// float FMAs on the widened bf16 values, so every architecture computes the same products). Each operand is
// __nv_bfloat16 (used as it is) or float (rounded to bfloat16, nearest even, as it is loaded): instantiated
// for all four pairs. The product of two bf16 values is exact in float32, so results differ from a float32
// GEMM on the (rounded) inputs only by the order of the float32 sums.
template <typename TA, typename TB>
void tile_gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const TA* A, int64_t lda,
                    const TB* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace grpo::cuda
