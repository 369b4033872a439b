// The plain triple loop (double accumulation) that the tests compare gemm against (gemm.h's argument layout).
#pragma once

#include <cstdint>

namespace grpo {

void gemm_reference(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace grpo
