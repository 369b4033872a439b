// Single-precision GEMM on tensor cores for the fused LM head (the toolkit ships no cuBLAS headers):
//   C[M,N] = alpha · op(A) · op(B) + beta · C     row-major device pointers, op(X) = Xᵀ when trans_x
// as the CPU's grpo_sgemm (native/include/grpo/gemm.h); beta = 0 ignores C. Each float is split into
// a TF32 high part and a TF32 remainder, and three WMMA products (hi·hi + hi·lo + lo·hi) recover about
// float32 accuracy (the "3xTF32" scheme of CUTLASS), where plain TF32 would round inputs to 10 bits.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace grpo::cuda {

void tile_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace grpo::cuda
