#include "sampling_reference.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <vector>

namespace grpo::reference {

namespace {

template <typename T>
T param(const T* values, int64_t row, T fallback) {
  return values ? values[row] : fallback;
}

// Logits after the allow mask and the penalties, in float32 as the kernel computes them.
std::vector<float> penalised_row(const float* x, int64_t vocab, int64_t row, const grpo_sampling_params& p) {
  std::vector<float> y(x, x + vocab);
  for (int64_t t = 0; t < vocab; ++t)
    if (p.allow_bits && !((p.allow_bits[row * ((vocab + 31) / 32) + t / 32] >> (t % 32)) & 1u)) y[t] = -INFINITY;
  if (!p.history_offsets) return y;
  std::map<int32_t, int64_t> counts;
  for (int32_t i = p.history_offsets[row]; i < p.history_offsets[row + 1]; ++i) ++counts[p.history[i]];
  const float repetition = param(p.repetition_penalty, row, 1.0f), frequency = param(p.frequency_penalty, row, 0.0f);
  const float presence = param(p.presence_penalty, row, 0.0f);
  for (const auto& [token, count] : counts) {
    float v = y[token];
    if (v == -INFINITY) continue;
    v = v > 0.0f ? v / repetition : v * repetition;
    v = v - frequency * static_cast<float>(count);
    y[token] = v - presence;
  }
  return y;
}

// Keeps the tokens of `order` (sorted by y, descending) whose strictly-greater mass is < top_p · total.
void top_p_filter(const std::vector<float>& y, const std::vector<int64_t>& order, double top_p, std::vector<double>& w) {
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  double above = 0.0;
  for (size_t begin = 0, end; begin < order.size(); begin = end) {
    double group = 0.0;
    for (end = begin; end < order.size() && y[order[end]] == y[order[begin]]; ++end) group += w[order[end]];
    if (!(above < top_p * total))
      for (size_t i = begin; i < end; ++i) w[order[i]] = 0.0;
    above += group;
  }
}

void row_probs(const float* x, int64_t vocab, int64_t row, const grpo_sampling_params& p, double* probs, double* raw) {
  const std::vector<float> y = penalised_row(x, vocab, row, p);
  const float max = *std::max_element(y.begin(), y.end());
  if (max == -INFINITY) return std::fill(probs, probs + vocab, NAN), std::fill(raw, raw + vocab, NAN);
  const double temperature = param(p.temperature, row, 1.0f);
  if (temperature == 0.0) {
    const int64_t argmax = std::find(y.begin(), y.end(), max) - y.begin();
    for (int64_t t = 0; t < vocab; ++t) probs[t] = t == argmax, raw[t] = t == argmax ? 0.0 : -INFINITY;
    return;
  }
  std::vector<double> w(vocab);
  for (int64_t t = 0; t < vocab; ++t) w[t] = std::exp((static_cast<double>(y[t]) - max) / temperature);
  const double log_total = std::log(std::accumulate(w.begin(), w.end(), 0.0));
  for (int64_t t = 0; t < vocab; ++t) raw[t] = std::log(w[t]) - log_total;
  std::vector<int64_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return y[a] > y[b]; });
  order.resize(std::count_if(y.begin(), y.end(), [](float v) { return v > -INFINITY; }));
  const int32_t top_k = param(p.top_k, row, 0);
  if (top_k > 0 && top_k < static_cast<int64_t>(order.size())) {
    const float kth = y[order[top_k - 1]];
    for (int64_t t = 0; t < vocab; ++t)
      if (y[t] < kth) w[t] = 0.0;
  }
  const double top_p = param(p.top_p, row, 1.0f);
  if (top_p < 1.0) top_p_filter(y, order, top_p, w);
  const double min_p = param(p.min_p, row, 0.0f);  // the max token's weight is exp(0) = 1
  for (int64_t t = 0; t < vocab; ++t)
    if (w[t] < min_p) w[t] = 0.0;
  const double kept = std::accumulate(w.begin(), w.end(), 0.0);
  for (int64_t t = 0; t < vocab; ++t) probs[t] = w[t] / kept;
}

}  // namespace

void sampling_probs(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params& params, double* probs,
                    double* raw_logp) {
  for (int64_t r = 0; r < rows; ++r)
    row_probs(logits + r * vocab, vocab, r, params, probs + r * vocab, raw_logp + r * vocab);
}

}  // namespace grpo::reference
