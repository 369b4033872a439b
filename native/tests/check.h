// A minimal test harness for the C++ tests: CHECK records failures, main returns their count.
#pragma once

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace grpo::test {

inline int& failures() {
  static int count = 0;
  return count;
}

#define CHECK(condition)                                                               \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
      ++grpo::test::failures();                                                        \
    }                                                                                  \
  } while (0)

// Reports the first mismatches of |actual - expected| > atol + rtol·|expected|.
template <typename A, typename E>
bool close(const char* what, const A* actual, const E* expected, size_t n, double atol, double rtol) {
  int shown = 0;
  for (size_t i = 0; i < n; ++i) {
    const double a = actual[i], e = expected[i];
    if (std::fabs(a - e) <= atol + rtol * std::fabs(e)) continue;
    if (shown++ < 5) std::fprintf(stderr, "%s[%zu]: got %.9g, expected %.9g\n", what, i, a, e);
  }
  if (shown) ++failures();
  return shown == 0;
}

inline std::vector<float> random_floats(size_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(n);
  for (auto& v : values) v = normal(rng);
  return values;
}

inline int report(const char* name) {
  std::printf("%s: %s (%d failures)\n", name, failures() ? "FAILED" : "passed", failures());
  return failures() ? 1 : 0;
}

}  // namespace grpo::test
