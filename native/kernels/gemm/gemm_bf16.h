// GEMM with bfloat16 products for the built-in model (an addition beside gemm.h):
//   C[M,N] = alpha · op(A) · op(B) + beta · C, same layout and arguments as grpo::gemm.
// Where the CPU has AVX512_BF16, A and B are rounded to bfloat16 (nearest even) while being
// packed, and the products are summed in float32, at bfloat16 input precision (8 significant
// bits). Where the CPU has AMX-BF16 too (and Linux grants this process the tile state), the
// tile unit multiplies (gemm_amx.cc); else vdpbf16ps does (gemm_avx512_bf16.cc, about twice the
// float32 GEMM's rate). The two sum each element's products in different orders, so their
// results may differ in the last bits. Elsewhere it is grpo::gemm.
// Like gemm, results are deterministic and bitwise identical for any thread count.
#pragma once

#include <cstdint>

namespace grpo {

void gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// True when gemm_bf16 runs the bfloat16 kernel on this CPU (false: it is the float32 gemm).
bool gemm_bf16_native();

// The kernel gemm_bf16 runs on this CPU: "amx_bf16", "avx512_bf16", or where it is not native the float32
// gemm's path ("avx512", "avx2", "generic").
const char* gemm_bf16_kernel();

}  // namespace grpo
