#include "sample.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "thread_pool.h"

namespace grpo::model {

namespace {

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double uniform(uint64_t seed, const StepRow& r) {
  return static_cast<double>(mix(mix(seed ^ mix(static_cast<uint64_t>(r.row))) + static_cast<uint64_t>(r.step)) >> 11) * 0x1.0p-53;
}

// Candidates (sorted by weight, descending) kept by top-k / top-p; weights [vocab] = exp((logits - max) / T), sum Σ weights.
int64_t kept_count(std::vector<int32_t>& order, const std::vector<double>& probs, double sum, const grpo_generate_options& o) {
  const int64_t vocab = static_cast<int64_t>(order.size());
  const int64_t k = o.top_k > 0 ? std::min(o.top_k, vocab) : vocab;
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int32_t a, int32_t b) { return probs[a] > probs[b] || (probs[a] == probs[b] && a < b); });
  if (!(o.top_p < 1.0f)) return k;
  double mass = 0.0;
  for (int64_t i = 0; i < k; ++i)
    if ((mass += probs[order[i]]) >= o.top_p * sum) return i + 1;
  return k;
}

int32_t sample_row(const float* logits, int64_t vocab, const StepRow& r, const grpo_generate_options& o, float* logp) {
  const bool greedy = o.temperature <= 0.0f;
  const double scale = greedy ? 1.0 : 1.0 / o.temperature;
  const float max = *std::max_element(logits, logits + vocab);
  std::vector<double> probs(static_cast<size_t>(vocab));
  double sum = 0.0;
  for (int64_t v = 0; v < vocab; ++v) sum += (probs[v] = std::exp((logits[v] - max) * scale));
  int32_t token = static_cast<int32_t>(std::max_element(logits, logits + vocab) - logits);
  if (!greedy) {
    std::vector<int32_t> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    const int64_t kept = kept_count(order, probs, sum, o);
    double kept_mass = 0.0;
    for (int64_t i = 0; i < kept; ++i) kept_mass += probs[order[i]];
    double u = uniform(o.seed, r) * kept_mass;
    token = order[kept - 1];
    for (int64_t i = 0; i < kept; ++i)
      if ((u -= probs[order[i]]) < 0.0) {
        token = order[i];
        break;
      }
  }
  *logp = static_cast<float>((logits[token] - max) * scale - std::log(sum));
  return token;
}

}  // namespace

void sample_step(const float* logits, int64_t n, int64_t vocab, const StepRow* rows, const grpo_generate_options& o,
                 int32_t* tokens, float* logp) {
  parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) tokens[i] = sample_row(logits + i * vocab, vocab, rows[i], o, logp + i);
  });
}

}  // namespace grpo::model
