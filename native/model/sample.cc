#include "sample.h"

#include <cmath>

#include "runtime/error.h"
#include "runtime/thread_pool.h"

namespace grpo::model {

namespace {

float log_softmax_at(const float* x, int64_t vocab, int32_t token) {
  float max = x[0];
  for (int64_t v = 1; v < vocab; ++v) max = std::max(max, x[v]);
  double sum = 0.0;
  for (int64_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(x[v] - max));
  return static_cast<float>(x[token] - max - std::log(sum));
}

}  // namespace

bool uses_penalties(const grpo_sampling_params& p) {
  return p.repetition_penalty || p.presence_penalty || p.frequency_penalty;
}

grpo_sampling_params step_params(const grpo_sampling_params& base, int64_t step, const History& history) {
  grpo_sampling_params p = base;
  p.step = static_cast<uint64_t>(step);
  p.history = history.offsets.empty() ? nullptr : history.ids.data();
  p.history_offsets = history.offsets.empty() ? nullptr : history.offsets.data();
  return p;
}

void sample_step(const float* logits, int64_t nseq, int64_t vocab, const grpo_sampling_params& base, int64_t step,
                 const History& history, int32_t* tokens, float* logp) {
  const grpo_sampling_params p = step_params(base, step, history);
  const grpo_status status = grpo_sample(logits, nseq, vocab, &p, tokens, nullptr, logp);
  if (status != GRPO_OK) fail(status, "sampling: %s", grpo_last_error());
  parallel_for(nseq, 8, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      if (p.temperature && p.temperature[r] == 0.0f) logp[r] = log_softmax_at(logits + r * vocab, vocab, tokens[r]);
  });
}

}  // namespace grpo::model
