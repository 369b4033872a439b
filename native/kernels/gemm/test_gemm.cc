// gemm against the triple-loop reference: every kernel path this CPU runs, all transpose
// combinations, odd shapes (edge tiles, several k-chunks and row/column chunks), alpha/beta,
// leading dimensions wider than the matrices, and bitwise equality across thread counts.
#include <cmath>
#include <cstring>
#include <vector>

#include "check.h"
#include "gemm.h"
#include "runtime/amx.h"
#include "runtime/bf16.h"
#include "gemm_bf16.h"
#include "gemm_kernels.h"
#include "gemm_reference.h"
#include "grpo/gemm.h"
#include "grpo/grpo.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace {

using grpo::gemm_detail::TileKernel;

struct Case {
  bool ta, tb;
  int64_t M, N, K;
  float alpha, beta;
  int64_t pad;  // extra columns in every leading dimension
};

// Runs `kernel` and the reference on the same inputs; C's padding columns must stay untouched.
void matches_reference(const TileKernel& kernel, const Case& c) {
  const int64_t lda = (c.ta ? c.M : c.K) + c.pad, ldb = (c.tb ? c.K : c.N) + c.pad, ldc = c.N + c.pad;
  const int64_t a_rows = c.ta ? c.K : c.M, b_rows = c.tb ? c.N : c.K;
  std::vector<float> A = grpo::test::random_floats(a_rows * lda, 1.0f, 1);  // [a_rows, lda]
  std::vector<float> B = grpo::test::random_floats(b_rows * ldb, 1.0f, 2);  // [b_rows, ldb]
  std::vector<float> C = grpo::test::random_floats(c.M * ldc, 1.0f, 3);     // [M, ldc]
  std::vector<float> R = C;
  grpo::gemm_detail::gemm_with(kernel, c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta, C.data(), ldc);
  grpo::gemm_reference(c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta, R.data(), ldc);
  const double tol = 2e-6 * std::sqrt(static_cast<double>(c.K) + 1.0) * 4.0;
  if (!grpo::test::close(kernel.name, C.data(), R.data(), C.size(), tol, 1e-5))
    std::fprintf(stderr, "  case ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g pad=%lld\n", c.ta, c.tb,
                 static_cast<long long>(c.M), static_cast<long long>(c.N), static_cast<long long>(c.K), c.alpha, c.beta,
                 static_cast<long long>(c.pad));
}

std::vector<float> rounded_to_bf16(std::vector<float> x) {
  for (float& v : x) v = grpo::bf16::round_float(v);
  return x;
}

// beta = 0 must ignore C entirely, NaN included (bf16 kernels: against the reference on bf16-rounded inputs).
void beta_zero_ignores_nan(const TileKernel& kernel) {
  const int64_t M = 17, N = 40, K = 9;
  std::vector<float> A = grpo::test::random_floats(M * K, 1.0f, 7), B = grpo::test::random_floats(K * N, 1.0f, 8);
  std::vector<float> C(M * N, NAN), R(M * N, 0.0f);
  grpo::gemm_detail::gemm_with(kernel, false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, C.data(), N);
  if (kernel.to_pairs) A = rounded_to_bf16(A), B = rounded_to_bf16(B);
  grpo::gemm_reference(false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, R.data(), N);
  grpo::test::close(kernel.name, C.data(), R.data(), C.size(), 1e-5, 1e-5);
}

// Shapes chosen to hit: single elements, partial tiles in rows and columns, K = 0, several
// k-chunks (K > 512), several row chunks (M > 2048) and column chunks (N > 2048).
std::vector<Case> cases() {
  std::vector<Case> list;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      list.push_back({ta, tb, 1, 1, 1, 1.0f, 0.0f, 0});
      list.push_back({ta, tb, 13, 45, 7, 0.5f, 1.0f, 3});
      list.push_back({ta, tb, 15, 33, 1, -1.0f, 0.25f, 0});
      list.push_back({ta, tb, 28, 47, 16, 1.0f, 0.5f, 2});
      list.push_back({ta, tb, 14, 31, 40, 1.0f, 0.0f, 1});
      list.push_back({ta, tb, 64, 600, 300, 1.0f, 0.0f, 0});
      list.push_back({ta, tb, 29, 70, 1100, 2.0f, -0.5f, 5});
      list.push_back({ta, tb, 5, 3, 0, 1.0f, 2.0f, 1});
      list.push_back({ta, tb, 3, 2100, 20, 1.0f, 1.0f, 16});
      list.push_back({ta, tb, 17, 15, 33, 1.0f, 0.0f, 1});  // one off the 16-wide AMX tiles and 32-k steps
      list.push_back({ta, tb, 33, 17, 15, -2.0f, 1.0f, 0});
      list.push_back({ta, tb, 1030, 33, 65, 1.0f, 0.5f, 2});
    }
  list.push_back({false, true, 2100, 40, 30, 1.0f, 0.0f, 0});
  list.push_back({true, false, 2100, 33, 520, 1.0f, 1.0f, 2});
  return list;
}

std::vector<TileKernel> kernels_for_this_cpu() {
  std::vector<TileKernel> list{grpo::gemm_detail::generic_kernel()};
  const char* path = grpo_cpu_path();
  if (std::strcmp(path, "avx2") == 0 || std::strcmp(path, "avx512") == 0) list.push_back(grpo::gemm_detail::avx2_kernel());
  if (std::strcmp(path, "avx512") == 0) list.push_back(grpo::gemm_detail::avx512_kernel());
  return list;
}

// Each kernel's operand packer writes exactly the plain packer's panel: partial panels (count < width), k tails
// (kc not a multiple of the register block), both panel widths of the kernel.
void packer_matches_plain(const TileKernel& kernel) {
  const int64_t ld = 70;
  const std::vector<float> src = grpo::test::random_floats(32 * ld, 1.0f, 9);  // [32, ld]
  for (int width : {kernel.mr, kernel.nr})
    for (int count : {1, width / 2, width - 1, width})
      for (int64_t kc : {1, 7, 8, 17, 64}) {
        std::vector<float> fast(kc * width, NAN), plain(kc * width, -1.0f);  // [kc, width]
        kernel.pack_transposed(src.data() + 3, ld, count, kc, width, fast.data());
        grpo::gemm_detail::pack_transposed_generic(src.data() + 3, ld, count, kc, width, plain.data());
        if (std::memcmp(fast.data(), plain.data(), fast.size() * sizeof(float)) != 0)
          std::fprintf(stderr, "  %s packer differs: width=%d count=%d kc=%lld\n", kernel.name, width, count,
                       static_cast<long long>(kc));
        CHECK(std::memcmp(fast.data(), plain.data(), fast.size() * sizeof(float)) == 0);
      }
}

void same_bits_for_any_thread_count(bool ta, bool tb) {
  const int64_t M = 37, N = 1100, K = 1300;
  std::vector<float> A = grpo::test::random_floats(M * K, 1.0f, 4), B = grpo::test::random_floats(N * K, 1.0f, 5);
  std::vector<float> one(M * N, 1.0f), two(M * N, 1.0f);
  const int64_t lda = ta ? M : K, ldb = tb ? K : N;
  grpo_set_num_threads(1);
  grpo::gemm(ta, tb, M, N, K, 1.0f, A.data(), lda, B.data(), ldb, 0.5f, one.data(), N);
  grpo_set_num_threads(2);
  grpo::gemm(ta, tb, M, N, K, 1.0f, A.data(), lda, B.data(), ldb, 0.5f, two.data(), N);
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}

// B packed once (several k- and n-chunks, edge panels) gives gemm's bits for any M and thread count, with A
// transposed or not and beta 0 (C's NaN ignored) or not.
void packed_b_same_bits_as_gemm(bool tb) {
  const int64_t N = 2100, K = 1100;
  const std::vector<float> B = grpo::test::random_floats(N * K, 1.0f, 6);
  const grpo::PackedB packed = grpo::pack_b(tb, N, K, B.data(), tb ? K : N);
  for (int64_t M : {1, 4, 37})
    for (bool ta : {false, true})
      for (float beta : {0.0f, 1.0f, -0.5f}) {
        const std::vector<float> A = grpo::test::random_floats(M * K, 1.0f, 7), C = grpo::test::random_floats(M * N, 1.0f, 8);
        std::vector<float> plain = C, fast = C;
        if (beta == 0.0f) fast[0] = NAN;
        grpo::gemm(ta, tb, M, N, K, 1.0f, A.data(), ta ? M : K, B.data(), tb ? K : N, beta, plain.data(), N);
        for (int threads : {1, 2}) {
          grpo_set_num_threads(threads);
          std::vector<float> out = fast;
          if (!ta && beta == 0.0f) grpo::gemm_packed(M, A.data(), K, packed, out.data(), N);
          else grpo::gemm_packed(ta, M, A.data(), ta ? M : K, packed, beta, out.data(), N);
          CHECK(std::memcmp(plain.data(), out.data(), plain.size() * sizeof(float)) == 0);
        }
      }
}

// The bf16 kernels this CPU runs: none, AVX512_BF16, or that and AMX (gemm_bf16 picks the last).
std::vector<TileKernel> bf16_kernels_for_this_cpu() {
  std::vector<TileKernel> list;
  if (grpo::gemm_detail::best_bf16_kernel()) list.push_back(grpo::gemm_detail::avx512_bf16_kernel());
  if (grpo::gemm_detail::best_bf16_kernel() && grpo::amx_bf16_usable()) list.push_back(grpo::gemm_detail::amx_bf16_kernel());
  return list;
}

// |got − expected| within tolerance where expected is finite; the same NaN and the same infinities elsewhere.
void close_with_specials(const char* what, const std::vector<float>& got, const std::vector<float>& expected, double atol) {
  int shown = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const float g = got[i], e = expected[i];
    const bool ok = std::isnan(e) ? std::isnan(g) : std::isinf(e) ? g == e : std::fabs(g - e) <= atol + 1e-5 * std::fabs(e);
    if (!ok && shown++ < 5) std::fprintf(stderr, "%s[%zu]: got %.9g, expected %.9g\n", what, i, g, e);
  }
  CHECK(shown == 0);
}

// A bf16 kernel equals the reference on bf16-rounded inputs (float32 sums).
void bf16_matches_rounded_reference(const TileKernel& kernel, const Case& c) {
  const int64_t lda = (c.ta ? c.M : c.K) + c.pad, ldb = (c.tb ? c.K : c.N) + c.pad, ldc = c.N + c.pad;
  std::vector<float> A = grpo::test::random_floats((c.ta ? c.K : c.M) * lda, 1.0f, 21);  // [rows of stored A, lda]
  std::vector<float> B = grpo::test::random_floats((c.tb ? c.N : c.K) * ldb, 1.0f, 22);  // [rows of stored B, ldb]
  std::vector<float> C = grpo::test::random_floats(c.M * ldc, 1.0f, 23), R = C;           // [M, ldc]
  grpo::gemm_detail::gemm_with(kernel, c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta, C.data(), ldc);
  A = rounded_to_bf16(A), B = rounded_to_bf16(B);
  grpo::gemm_reference(c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta, R.data(), ldc);
  if (!grpo::test::close(kernel.name, C.data(), R.data(), C.size(), 1e-5 * std::sqrt(c.K + 1.0) * 4.0, 1e-5))
    std::fprintf(stderr, "  case ta=%d tb=%d M=%lld N=%lld K=%lld\n", c.ta, c.tb, static_cast<long long>(c.M),
                 static_cast<long long>(c.N), static_cast<long long>(c.K));
}

// NaN and ±Infinity in A and B reach exactly the elements of C the reference puts them in, for every transpose.
void bf16_propagates_nan_and_inf(const TileKernel& kernel) {
  const int64_t M = 35, N = 37, K = 41;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      std::vector<float> A = grpo::test::random_floats(M * K, 1.0f, 26), B = grpo::test::random_floats(K * N, 1.0f, 27);
      auto a = [&](int64_t i, int64_t k) -> float& { return ta ? A[k * M + i] : A[i * K + k]; };  // op(A) [M, K]
      auto b = [&](int64_t k, int64_t j) -> float& { return tb ? B[j * K + k] : B[k * N + j]; };  // op(B) [K, N]
      a(2, 5) = INFINITY, a(33, 40) = -INFINITY, a(20, 0) = NAN;
      b(7, 3) = NAN, b(40, 36) = INFINITY, b(5, 16) = -INFINITY;
      std::vector<float> C(M * N, NAN), R(M * N);
      grpo::gemm_detail::gemm_with(kernel, ta, tb, M, N, K, 1.0f, A.data(), ta ? M : K, B.data(), tb ? K : N, 0.0f, C.data(), N);
      const std::vector<float> rA = rounded_to_bf16(A), rB = rounded_to_bf16(B);
      grpo::gemm_reference(ta, tb, M, N, K, 1.0f, rA.data(), ta ? M : K, rB.data(), tb ? K : N, 0.0f, R.data(), N);
      close_with_specials(kernel.name, C, R, 1e-4);
    }
}

void bf16_same_bits_for_any_thread_count(const TileKernel& kernel) {
  const int64_t M = 45, N = 700, K = 1031;
  std::vector<float> A = grpo::test::random_floats(M * K, 1.0f, 24), B = grpo::test::random_floats(N * K, 1.0f, 25);
  std::vector<float> one(M * N), two(M * N), again(M * N);
  for (bool ta : {false, true}) {
    grpo_set_num_threads(1);
    grpo::gemm_detail::gemm_with(kernel, ta, true, M, N, K, 1.0f, A.data(), ta ? M : K, B.data(), K, 0.0f, one.data(), N);
    grpo_set_num_threads(2);
    grpo::gemm_detail::gemm_with(kernel, ta, true, M, N, K, 1.0f, A.data(), ta ? M : K, B.data(), K, 0.0f, two.data(), N);
    grpo::gemm_detail::gemm_with(kernel, ta, true, M, N, K, 1.0f, A.data(), ta ? M : K, B.data(), K, 0.0f, again.data(), N);
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(two.data(), again.data(), two.size() * sizeof(float)) == 0);
  }
}

// The bf16 pair word of op(X)[i, k] and op(X)[i, k + 1].
uint32_t pair_word(float lo, float hi) {
  return grpo::bf16::round(lo) | static_cast<uint32_t>(grpo::bf16::round(hi)) << 16;
}

// gemm_amx.cc's panels written plainly, from op(X)[i, k] (zero past count and kc):
//   A [kc/32][32 rows][16 words], B [kc/2][32 columns] words, kc padded to 32.
template <typename Element>
std::vector<uint32_t> plain_amx_panel(bool a_panel, int count, int64_t kc, Element x) {
  const int64_t padded = (kc + 31) / 32 * 32;
  std::vector<uint32_t> words(padded / 2 * 32);
  auto at = [&](int i, int64_t k) { return i < count && k < kc ? x(i, k) : 0.0f; };
  for (int64_t p = 0; p < padded / 2; ++p)
    for (int i = 0; i < 32; ++i)
      words[a_panel ? (p / 16 * 32 + i) * 16 + p % 16 : p * 32 + i] = pair_word(at(i, 2 * p), at(i, 2 * p + 1));
  return words;
}

// The AMX kernel's own packers against the plain layout: rows along k and along i, partial panels and k tails.
void amx_packers_match_plain(const TileKernel& kernel) {
  const int64_t ld = 90;
  const std::vector<float> src = grpo::test::random_floats(90 * ld, 1.0f, 28);  // [90, ld]
  for (bool a_panel : {true, false})
    for (bool along_k : {true, false})
      for (int count : {1, 15, 16, 17, 31, 32})
        for (int64_t kc : {1, 2, 31, 32, 33, 64, 70}) {
          auto x = [&](int i, int64_t k) { return along_k ? src[i * ld + k] : src[k * ld + i]; };
          const std::vector<uint32_t> plain = plain_amx_panel(a_panel, count, kc, x);
          std::vector<uint32_t> fast(plain.size(), 0xFFFFFFFFu);
          (a_panel ? kernel.pack_a : kernel.pack_b)(src.data(), ld, along_k, count, kc, reinterpret_cast<float*>(fast.data()));
          if (fast != plain)
            std::fprintf(stderr, "  amx %s packer differs: along_k=%d count=%d kc=%lld\n", a_panel ? "A" : "B", along_k,
                         count, static_cast<long long>(kc));
          CHECK(fast == plain);
        }
}

// Bits 17 and 18 of XINUSE (xgetbv 1): this thread's tile configuration or data is out of its initial state.
bool tile_state_in_use() {
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(0xD, 1, &eax, &ebx, &ecx, &edx) || !(eax & 4u)) return false;  // no xgetbv 1
  unsigned low, high;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(1));
  return (low & (3u << 17)) != 0;
#else
  return false;
#endif
}

// gemm_bf16 leaves no tile state configured on the calling thread, whichever thread count ran it.
void amx_releases_tiles() {
  const int64_t M = 70, N = 90, K = 100;
  const std::vector<float> A = grpo::test::random_floats(M * K, 1.0f, 29), B = grpo::test::random_floats(K * N, 1.0f, 30);
  std::vector<float> C(M * N);
  for (int threads : {1, 2}) {
    grpo_set_num_threads(threads);
    grpo::gemm_bf16(false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, C.data(), N);
    CHECK(!tile_state_in_use());
  }
}

// The C ABI checks shapes, strides and pointers before multiplying.
void c_abi_checks_arguments() {
  std::vector<float> A(6, 1.0f), B(12, 1.0f), C(8, 0.0f);  // [2, 3], [3, 4], [2, 4]
  CHECK(grpo_sgemm(0, 0, 2, 4, 3, 1.0f, A.data(), 3, B.data(), 4, 0.0f, C.data(), 4) == GRPO_OK);
  CHECK(C[0] == 3.0f && C[7] == 3.0f);
  CHECK(grpo_sgemm(0, 0, -1, 4, 3, 1.0f, A.data(), 3, B.data(), 4, 0.0f, C.data(), 4) == GRPO_ERR_SHAPE);
  CHECK(grpo_sgemm(0, 0, 2, 4, 3, 1.0f, A.data(), 2, B.data(), 4, 0.0f, C.data(), 4) == GRPO_ERR_SHAPE);
  CHECK(grpo_sgemm(1, 0, 2, 4, 3, 1.0f, A.data(), 1, B.data(), 4, 0.0f, C.data(), 4) == GRPO_ERR_SHAPE);
  CHECK(grpo_sgemm(0, 0, 2, 4, 3, 1.0f, nullptr, 3, B.data(), 4, 0.0f, C.data(), 4) == GRPO_ERR_INVALID_ARGUMENT);
  CHECK(std::strstr(grpo_last_error(), "A must not be NULL") != nullptr);
  CHECK(grpo_sgemm_bf16(0, 1, 2, 4, 3, 1.0f, A.data(), 3, B.data(), 2, 0.0f, C.data(), 4) == GRPO_ERR_SHAPE);
  CHECK(grpo_sgemm(0, 0, 0, 0, 0, 1.0f, nullptr, 1, nullptr, 1, 0.0f, nullptr, 1) == GRPO_OK);
}

}  // namespace

int main() {
  CHECK(std::strcmp(grpo::gemm_detail::best_kernel().name, grpo_cpu_path()) == 0);
  const std::vector<TileKernel> bf16_kernels = bf16_kernels_for_this_cpu();
  CHECK(std::strcmp(grpo::gemm_bf16_kernel(), bf16_kernels.empty() ? grpo_cpu_path() : bf16_kernels.back().name) == 0);
  for (const TileKernel& kernel : kernels_for_this_cpu()) {
    for (const Case& c : cases()) matches_reference(kernel, c);
    beta_zero_ignores_nan(kernel);
    packer_matches_plain(kernel);
  }
  for (bool ta : {false, true})
    for (bool tb : {false, true}) same_bits_for_any_thread_count(ta, tb);
  for (bool tb : {false, true}) packed_b_same_bits_as_gemm(tb);
  c_abi_checks_arguments();
  for (const TileKernel& kernel : bf16_kernels) {
    for (const Case& c : cases()) bf16_matches_rounded_reference(kernel, c);
    beta_zero_ignores_nan(kernel);
    bf16_propagates_nan_and_inf(kernel);
    bf16_same_bits_for_any_thread_count(kernel);
    if (kernel.pack_a) amx_packers_match_plain(kernel);
  }
  if (grpo::amx_bf16_usable()) amx_releases_tiles();
  std::printf("gemm_bf16 kernel: %s\n", grpo::gemm_bf16_kernel());
  return grpo::test::report("test_gemm");
}
