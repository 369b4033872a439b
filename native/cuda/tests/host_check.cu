// grpo_cuda_host_check: the parts of the CUDA sampler that must equal the CPU's bit for bit, checked on the host
// (no GPU needed, so CI can run it): the Philox uniform, the exp polynomial, the fixed-point weights and the
// order-preserving keys of the top-k / top-p bisection. Exit status: the number of failed checks.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "check.h"
#include "grpo/grpo.h"
#include "philox.cuh"
#include "row_math.cuh"
#include "runtime/philox.h"
#include "sampling/sampling_passes.h"
#include "sampling_row.cuh"

void cpu_exp_nonpositive(const float* x, float* y, int64_t n);  // host_check_cpu.cc

namespace {

void philox_matches() {
  int64_t differing = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    const uint64_t seed = i * 0x9E3779B97F4A7C15ull, row = i % 977, step = i * 31 + (i << 33);
    differing += grpo::cuda::philox::draw_u64(seed, row, step) != grpo::philox::draw_u64(seed, row, step);
  }
  std::printf("philox: %lld of 200000 uniforms differ\n", static_cast<long long>(differing));
  CHECK(differing == 0);
}

void exp_matches() {
  std::vector<float> x = {0.0f, -0.0f, -87.3f, -87.29f, -87.31f, -103.9f, -INFINITY, -1e-30f};
  const int64_t n = 1 << 22;
  for (int64_t i = 0; i < n; ++i) x.push_back(-100.0f * static_cast<float>(i) / n - static_cast<float>(i % 7) * 1e-3f);
  std::vector<float> cpu(x.size());
  cpu_exp_nonpositive(x.data(), cpu.data(), static_cast<int64_t>(x.size()));
  int64_t differing = 0;
  for (size_t i = 0; i < x.size(); ++i) differing += grpo::cuda::float_bits(grpo::cuda::exp_nonpositive(x[i])) != grpo::cuda::float_bits(cpu[i]);
  std::printf("exp_nonpositive: %lld of %zu values differ (CPU path %s)\n", static_cast<long long>(differing), x.size(),
              grpo_cpu_path());
  CHECK(differing == 0);
}

void fixed_point_matches() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  int64_t differing = 0;
  for (int64_t vocab : {100, 5003, 32000, 151936, 1 << 20}) {
    const int low = grpo::sampling::fixed_point_low_bits(vocab);
    const float scale = static_cast<float>(int64_t{1} << low);
    for (int i = 0; i < 100000; ++i) {
      const float w = i < 3 ? (i == 0 ? 0.0f : i == 1 ? 1.0f : 1e-30f) : unit(rng) * std::ldexp(1.0f, -(i % 40));
      differing += grpo::sampling::fixed_point(w, low) != grpo::cuda::sampling::fixed_point(w, scale, low);
    }
  }
  std::printf("fixed_point: %lld weights differ\n", static_cast<long long>(differing));
  CHECK(differing == 0);
}

void keys_preserve_order() {
  std::vector<float> values = {-INFINITY, -3.5f, -1e-30f, -0.0f, 0.0f, 1e-30f, 2.0f, 1e30f};
  std::mt19937 rng(6);
  std::normal_distribution<float> normal(0.0f, 10.0f);
  for (int i = 0; i < 10000; ++i) values.push_back(normal(rng));
  int64_t wrong = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const uint32_t key = grpo::cuda::sampling::order_key(values[i]);
    wrong += grpo::cuda::sampling::key_float(key) != values[i];
    for (size_t j = 0; j < 64 && j < values.size(); ++j) {
      const uint32_t other = grpo::cuda::sampling::order_key(values[j]);
      wrong += (values[i] < values[j]) != (key < other) || (values[i] == values[j]) != (key == other);
    }
  }
  std::printf("order keys: %lld order or round-trip errors\n", static_cast<long long>(wrong));
  CHECK(wrong == 0);
}

}  // namespace

int main() {
  philox_matches();
  exp_matches();
  fixed_point_matches();
  keys_preserve_order();
  return grpo::test::report("grpo_cuda_host_check");
}
