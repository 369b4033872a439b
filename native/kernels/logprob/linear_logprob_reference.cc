#include "linear_logprob_reference.h"

#include "gemm/gemm_reference.h"
#include "logprob_reference.h"
#include "runtime/bf16.h"

namespace grpo::reference {

namespace {

// logits [rows, vocab] = hidden · weightᵀ + bias
std::vector<float> logits_of(const float* hidden, const float* weight, const float* bias, int64_t rows, int64_t H,
                             int64_t vocab) {
  std::vector<float> logits(rows * vocab);
  gemm_reference(false, true, rows, vocab, H, 1.0f, hidden, H, weight, H, 0.0f, logits.data(), vocab);
  for (int64_t t = 0; bias && t < rows; ++t)
    for (int64_t v = 0; v < vocab; ++v) logits[t * vocab + v] += bias[v];
  return logits;
}

}  // namespace

void linear_logprob_forward(const float* hidden, const float* weight, const float* bias, const int32_t* targets,
                            int64_t rows, int64_t hidden_size, int64_t vocab, double temperature, int32_t ignore_index,
                            double* logp, double* entropy) {
  const std::vector<float> logits = logits_of(hidden, weight, bias, rows, hidden_size, vocab);
  logprob_forward(logits.data(), targets, rows, vocab, temperature, ignore_index, logp, entropy);
}

void linear_logprob_backward(const float* hidden, const float* weight, const float* bias, const int32_t* targets,
                             int64_t rows, int64_t hidden_size, int64_t vocab, double temperature, int32_t ignore_index,
                             const float* grad_logp, const float* grad_entropy, double* grad_hidden, double* grad_weight,
                             double* grad_bias) {
  const int64_t H = hidden_size;
  const std::vector<float> logits = logits_of(hidden, weight, bias, rows, H, vocab);
  std::vector<double> g(rows * vocab);  // d(loss)/d(logits) [rows, vocab]
  logprob_backward(logits.data(), targets, rows, vocab, temperature, ignore_index, grad_logp, grad_entropy, g.data());
  for (int64_t i = 0; i < rows * H; ++i) grad_hidden[i] = 0.0;
  for (int64_t i = 0; i < vocab * H; ++i) grad_weight[i] = 0.0;
  for (int64_t v = 0; v < vocab; ++v) grad_bias[v] = 0.0;
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t v = 0; v < vocab; ++v) {
      const double d = g[t * vocab + v];
      grad_bias[v] += d;
      for (int64_t k = 0; k < H; ++k) {
        grad_hidden[t * H + k] += d * weight[v * H + k];
        grad_weight[v * H + k] += d * hidden[t * H + k];
      }
    }
}

std::vector<float> widen_bf16(const uint16_t* values, int64_t n) {
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = bf16::widen(values[i]);
  return out;
}

}  // namespace grpo::reference
