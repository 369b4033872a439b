#include "roofline.h"

#include <cstring>
#include <vector>

#include "simd.h"
#include "thread_pool.h"

namespace grpo {

namespace {

constexpr int64_t kReadBlock = 1 << 18;  // 1 MB of floats per task
constexpr int kChains = 12;              // enough independent FMAs to cover the FMA latency

// Eight independent vector sums of 8 floats (GCC vectors: the same loop over float lanes came out scalar, so
// the read roof was the scalar adds' on one thread).
GRPO_CLONES float sum_block(const float* x, int64_t n) {
  typedef float Eight __attribute__((vector_size(32)));
  constexpr int kSums = 8, kWidth = 8;
  Eight acc[kSums] = {}, v;
  int64_t i = 0;
  for (; i + kSums * kWidth <= n; i += kSums * kWidth)
    for (int a = 0; a < kSums; ++a) {
      std::memcpy(&v, x + i + a * kWidth, sizeof v);
      acc[a] += v;
    }
  float total = 0.0f;
  for (; i < n; ++i) total += x[i];
  for (const Eight& lanes : acc)
    for (int l = 0; l < kWidth; ++l) total += lanes[l];
  return total;
}

GRPO_CLONES float fma_chains(int64_t iterations) {
  float acc[kChains][simd::kLanes];
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < simd::kLanes; ++l) acc[c][l] = 1.0f + 1e-3f * static_cast<float>(c + l);
  const float a = 0.999999f, b = 1e-7f;
  for (int64_t it = 0; it < iterations; ++it)
    for (int c = 0; c < kChains; ++c)
      for (int l = 0; l < simd::kLanes; ++l) acc[c][l] = acc[c][l] * a + b;
  float total = 0.0f;
  for (auto& lanes : acc)
    for (float v : lanes) total += v;
  return total;
}

}  // namespace

double stream_read(const float* data, int64_t n) {
  std::vector<float> partial(static_cast<size_t>(block_count(n, kReadBlock)));
  parallel_for(n, kReadBlock, [&](int64_t begin, int64_t end) { partial[begin / kReadBlock] = sum_block(data + begin, end - begin); });
  double total = 0.0;
  for (float p : partial) total += p;
  return total;
}

double fma_burn(int64_t iterations) {
  const int threads = num_threads();
  std::vector<float> sink(static_cast<size_t>(threads));
  parallel_for(threads, 1, [&](int64_t begin, int64_t) { sink[begin] = fma_chains(iterations); });
  volatile float keep = sink[0];
  (void)keep;
  return 2.0 * kChains * simd::kLanes * static_cast<double>(iterations) * threads;
}

}  // namespace grpo
