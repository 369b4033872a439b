// gemm against the triple-loop reference for all transpose combinations and odd shapes.
#include <vector>

#include "check.h"
#include "gemm.h"
#include "grpo/grpo.h"

namespace {

void matches_reference(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, float beta) {
  std::vector<float> A = grpo::test::random_floats(M * K, 1.0f, 1), B = grpo::test::random_floats(K * N, 1.0f, 2);
  std::vector<float> C = grpo::test::random_floats(M * N, 1.0f, 3), R = C;
  const int64_t lda = ta ? M : K, ldb = tb ? K : N;
  grpo::gemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), N);
  grpo::gemm_reference(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, R.data(), N);
  grpo::test::close("C", C.data(), R.data(), C.size(), 1e-4, 1e-4);
}

void same_bits_for_any_thread_count() {
  const int64_t M = 37, N = 1100, K = 300;
  std::vector<float> A = grpo::test::random_floats(M * K, 1.0f, 4), B = grpo::test::random_floats(N * K, 1.0f, 5);
  std::vector<float> one(M * N), two(M * N);
  grpo_set_num_threads(1);
  grpo::gemm(false, true, M, N, K, 1.0f, A.data(), K, B.data(), K, 0.0f, one.data(), N);
  grpo_set_num_threads(2);
  grpo::gemm(false, true, M, N, K, 1.0f, A.data(), K, B.data(), K, 0.0f, two.data(), N);
  CHECK(one == two);
}

}  // namespace

int main() {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      matches_reference(ta, tb, 1, 1, 1, 1.0f, 0.0f);
      matches_reference(ta, tb, 13, 45, 7, 0.5f, 1.0f);
      matches_reference(ta, tb, 64, 600, 300, 1.0f, 0.0f);
      matches_reference(ta, tb, 5, 3, 0, 1.0f, 2.0f);
    }
  same_bits_for_any_thread_count();
  return grpo::test::report("test_gemm");
}
