// parallel_for covers every index once, propagates exceptions, and allows nested calls.
// simd::exp_nonpositive and simd::exp_masked, vectorised as the kernels use them: within 3 ulp of e^x on
// [-87.3, 0] (2.7 to 2.9 measured), exactly 0 below (and for -Infinity), NaN for NaN. The non-temporal stores
// at every width this CPU runs: the plain product's bits at every length and alignment, nothing outside.
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "check.h"
#include "grpo/grpo.h"
#include "simd.h"
#include "stream_store.h"
#include "thread_pool.h"

namespace {

// The clone of this CPU's path, as in the kernels (check-simd.js checks that the kernels' clones vectorise).
GRPO_CLONES void exp_span(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = grpo::simd::exp_nonpositive(x[i]);
}

GRPO_CLONES void exp_masked_span(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = grpo::simd::exp_masked(x[i]);
}

double ulps(float actual, double expected) {
  const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(expected)) - 23);
  return std::fabs(actual - expected) / ulp;
}

void check_exp(const char* name, void (*exp)(const float*, int64_t, float*)) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> zero_at = {-87.31f, -90.0f, -103.9f, -1e4f, -1e30f, -kInf};
  std::vector<float> x;  // [points + specials]: a dense grid of [-87.3, 0], then the special values
  const int points = 1 << 20;
  for (int i = 0; i <= points; ++i) x.push_back(-87.3f * static_cast<float>(i) / points);
  x.insert(x.end(), zero_at.begin(), zero_at.end());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  x.push_back(-std::numeric_limits<float>::quiet_NaN());
  std::vector<float> y(x.size());
  exp(x.data(), static_cast<int64_t>(x.size()), y.data());
  double worst = 0.0;
  for (int i = 0; i <= points; ++i) worst = std::fmax(worst, ulps(y[i], std::exp(static_cast<double>(x[i]))));
  std::printf("%s: %.2f ulp at most on [-87.3, 0] (CPU path %s)\n", name, worst, grpo_cpu_path());
  CHECK(worst <= 3.0);
  CHECK(y[0] == 1.0f);
  for (size_t k = 0; k < zero_at.size(); ++k) CHECK(y[points + 1 + k] == 0.0f && !std::signbit(y[points + 1 + k]));
  CHECK(std::isnan(y[x.size() - 2]) && std::isnan(y[x.size() - 1]));
}

// out = x · factor streamed at `path`'s width, for lengths 0..69 at each of 16 float offsets: the plain
// product's bits inside, the guard values outside; then stream_zero on the same grid.
void check_stream(const char* path) {
  std::vector<float> x(96), out(96 + 16 + 8), expected(out.size());  // 8 guard floats past the largest write
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 3.0f;
  bool same = true, zeros = true;
  for (int offset = 0; offset < 16; ++offset)
    for (int64_t n = 0; n < 70; ++n) {
      std::fill(out.begin(), out.end(), -7.0f), std::fill(expected.begin(), expected.end(), -7.0f);
      for (int64_t i = 0; i < n; ++i) expected[offset + i] = x[i] * 0.37f;
      grpo::simd::stream_scaled_on(path, out.data() + offset, x.data(), n, 0.37f);
      grpo::simd::stream_fence();
      same = same && std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)) == 0;
      std::fill(out.begin(), out.end(), -7.0f);
      grpo::simd::stream_zero(out.data() + offset, n);
      grpo::simd::stream_fence();
      for (size_t i = 0; i < out.size(); ++i) zeros = zeros && out[i] == (i >= size_t(offset) && i < size_t(offset + n) ? 0.0f : -7.0f);
    }
  std::printf("stream_scaled at the %s width: %s\n", path, same && zeros ? "the plain product" : "DIFFERS");
  CHECK(same);
  CHECK(zeros);
}

}  // namespace

int main() {
  check_stream("baseline");
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) check_stream("avx2");
  if (__builtin_cpu_supports("avx512f")) check_stream("avx512");
#endif
  check_exp("exp_nonpositive", exp_span);
  check_exp("exp_masked", exp_masked_span);
  for (int threads : {1, 2, 3}) {
    grpo_set_num_threads(threads);
    std::vector<std::atomic<int>> hits(1001);
    grpo::parallel_for(1001, 10, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
      grpo::parallel_for(4, 1, [](int64_t, int64_t) {});  // nested: runs serially, must not deadlock
    });
    bool once = true;
    for (auto& h : hits) once = once && h.load() == 1;
    CHECK(once);
    bool caught = false;
    try {
      grpo::parallel_for(100, 1, [](int64_t b, int64_t) {
        if (b == 57) throw std::runtime_error("block 57");
      });
    } catch (const std::runtime_error&) {
      caught = true;
    }
    CHECK(caught);
  }
  CHECK(grpo_set_num_threads(5000) == GRPO_ERR_VALUE_RANGE);
  return grpo::test::report("test_runtime");
}
