// GEMM with bfloat16 products for the built-in model (an addition beside gemm.h):
//   C[M,N] = alpha · op(A) · op(B) + beta · C, same layout and arguments as grpo::gemm.
// Where the CPU has AVX512_BF16, A and B are rounded to bfloat16 (nearest even) while being
// packed and multiplied with vdpbf16ps, summing in float32: about twice the float32 GEMM's
// rate, at bfloat16 input precision (8 significant bits). Elsewhere it is grpo::gemm.
// Like gemm, results are bitwise identical for any thread count.
#pragma once

#include <cstdint>

namespace grpo {

void gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// True when gemm_bf16 runs the bfloat16 kernel on this CPU (false: it is the float32 gemm).
bool gemm_bf16_native();

}  // namespace grpo
