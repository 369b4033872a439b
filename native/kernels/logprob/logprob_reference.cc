#include "logprob_reference.h"

#include <cmath>
#include <vector>

namespace grpo::reference {

namespace {

// softmax probabilities of logits/temperature; returns log-sum-exp
double softmax(const float* x, int64_t vocab, double temperature, std::vector<double>& p) {
  double max = -INFINITY;
  for (int64_t j = 0; j < vocab; ++j) max = std::fmax(max, x[j] / temperature);
  double sum = 0.0;
  for (int64_t j = 0; j < vocab; ++j) sum += std::exp(x[j] / temperature - max);
  const double lse = max + std::log(sum);
  p.resize(static_cast<size_t>(vocab));
  for (int64_t j = 0; j < vocab; ++j) p[j] = std::exp(x[j] / temperature - lse);
  return lse;
}

double entropy_of(const std::vector<double>& p) {
  double h = 0.0;
  for (double q : p)
    if (q > 0.0) h -= q * std::log(q);
  return h;
}

}  // namespace

void logprob_forward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab, double temperature,
                     int32_t ignore_index, double* logp, double* entropy) {
  std::vector<double> p;
  for (int64_t t = 0; t < rows; ++t) {
    if (targets[t] == ignore_index) {
      logp[t] = entropy[t] = 0.0;
      continue;
    }
    const float* x = logits + t * vocab;
    const double lse = softmax(x, vocab, temperature, p);
    logp[t] = x[targets[t]] / temperature - lse;
    entropy[t] = entropy_of(p);
  }
}

void logprob_backward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab, double temperature,
                      int32_t ignore_index, const float* grad_logp, const float* grad_entropy, double* grad_logits) {
  std::vector<double> p;
  for (int64_t t = 0; t < rows; ++t) {
    double* out = grad_logits + t * vocab;
    if (targets[t] == ignore_index) {
      for (int64_t j = 0; j < vocab; ++j) out[j] = 0.0;
      continue;
    }
    softmax(logits + t * vocab, vocab, temperature, p);
    const double h = entropy_of(p), g = grad_logp[t], ge = grad_entropy ? grad_entropy[t] : 0.0;
    for (int64_t j = 0; j < vocab; ++j) {
      const double log_p = p[j] > 0.0 ? std::log(p[j]) : 0.0;
      out[j] = (g * ((j == targets[t]) - p[j]) - ge * p[j] * (log_p + h)) / temperature;
    }
  }
}

}  // namespace grpo::reference
