// The C ABI of the GEMM: argument checks, then grpo::gemm.
#include "gemm.h"
#include "gemm_bf16.h"
#include "grpo/gemm.h"
#include "runtime/error.h"

namespace {

// A stored matrix of `rows` rows of `width` floats, `ld` apart.
void check_stored(const char* name, const void* data, int64_t rows, int64_t width, int64_t ld) {
  if (ld < (width > 1 ? width : 1))
    grpo::fail(GRPO_ERR_SHAPE, "ld%s must be >= max(1, %lld) (got %lld)", name, static_cast<long long>(width),
               static_cast<long long>(ld));
  if (rows > 0 && width > 0 && !data) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "%s must not be NULL", name);
}

using GemmFn = void (*)(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                       float, float*, int64_t);

grpo_status checked(GemmFn gemm, int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                    int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  return grpo::guarded([&] {
    if (M < 0 || N < 0 || K < 0)
      grpo::fail(GRPO_ERR_SHAPE, "need M, N, K >= 0 (got %lld, %lld, %lld)", static_cast<long long>(M),
                 static_cast<long long>(N), static_cast<long long>(K));
    check_stored("A", A, trans_a ? K : M, trans_a ? M : K, lda);
    check_stored("B", B, trans_b ? N : K, trans_b ? K : N, ldb);
    check_stored("C", C, M, N, ldc);
    gemm(trans_a != 0, trans_b != 0, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  });
}

}  // namespace

extern "C" grpo_status grpo_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                                  int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  return checked(&grpo::gemm, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

extern "C" grpo_status grpo_sgemm_bf16(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                                       const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                                       int64_t ldc) {
  return checked(&grpo::gemm_bf16, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

extern "C" int grpo_sgemm_bf16_native(void) { return grpo::gemm_bf16_native() ? 1 : 0; }
