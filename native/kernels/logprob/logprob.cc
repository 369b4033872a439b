// Log-prob scoring over materialised logits [rows, vocab]: forward (log-softmax + gather,
// entropy) and backward. One row per task; each span of a row is read from DRAM once (its max) and
// then from L1 (its exps), docs/performance.md.
#include "grpo/logprob.h"

#include <algorithm>
#include <cmath>

#include "linear_logprob_checks.h"
#include "runtime/error.h"
#include "runtime/simd.h"
#include "runtime/stream_store.h"
#include "runtime/thread_pool.h"
#include "softmax_row.h"

namespace grpo {

namespace {

constexpr int64_t kFloatsPerTask = 1 << 16;  // about 256 KB of logits per parallel block

struct RowResult {
  float max, log_sum, logp, entropy;
};

void check_target(int64_t vocab, int64_t row, int32_t target) {
  if (target < 0 || target >= vocab)
    fail(GRPO_ERR_INDEX_RANGE, "targets[%lld] = %d is outside [0, %lld)", static_cast<long long>(row), target,
         static_cast<long long>(vocab));
}

void check_stats(const OnlineSoftmax& stats, int64_t row) {
  if (!stats.finite) fail(GRPO_ERR_NON_FINITE, "logits row %lld contains NaN or +Infinity", static_cast<long long>(row));
  if (stats.max == -INFINITY) fail(GRPO_ERR_VALUE_RANGE, "logits row %lld is -Infinity everywhere", static_cast<long long>(row));
}

// The scaled row's statistics (the entropy only when asked for: without it the exp pass skips Σ e·d);
// throws if the row holds NaN/+Inf or is masked out entirely.
RowResult score_row(const float* x, int64_t vocab, int64_t row, int32_t target, float scale, bool with_entropy) {
  check_target(vocab, row, target);
  const OnlineSoftmax stats = with_entropy ? row_softmax(x, vocab, scale) : row_log_sum_exp(x, vocab, scale);
  check_stats(stats, row);
  const float log_sum = stats.log_sum();
  // (z_target − max) − log_sum keeps full precision when |logits| is large (1e4: ulp ≈ 1e-3).
  return {stats.max, log_sum, (x[target] * scale - stats.max) - log_sum, with_entropy ? stats.entropy() : 0.0f};
}

int64_t rows_per_task(int64_t vocab) { return vocab >= kFloatsPerTask ? 1 : kFloatsPerTask / vocab; }

}  // namespace

void logprob_forward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                     const grpo_logprob_options& options, float* logp, float* entropy, float* lse) {
  const float scale = 1.0f / options.temperature;
  parallel_for(rows, rows_per_task(vocab), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* x = logits + t * vocab;
      if (targets[t] == options.ignore_index) {
        logp[t] = 0.0f;
        if (entropy) entropy[t] = 0.0f;
        if (lse) lse[t] = 0.0f;
        continue;
      }
      const RowResult r = score_row(x, vocab, t, targets[t], scale, entropy != nullptr);
      logp[t] = r.logp;
      if (entropy) entropy[t] = r.entropy;
      if (lse) lse[t] = r.max + r.log_sum;
    }
  });
}

namespace {

void check_upstream(float g_logp, float g_entropy, int64_t row) {
  if (!std::isfinite(g_logp) || !std::isfinite(g_entropy))
    fail(GRPO_ERR_NON_FINITE, "upstream gradient at row %lld is not finite", static_cast<long long>(row));
}

// The rows of a backward in parallel: each row's upstream gradient checked, an ignored row's gradient zeroed,
// row(t, g_entropy, out [vocab]) on every other one.
template <typename RowFn>
void for_each_gradient_row(const int32_t* targets, int64_t rows, int64_t vocab, const grpo_logprob_options& options,
                           const float* grad_logp, const float* grad_entropy, float* grad_logits, bool stream, RowFn&& row) {
  parallel_for(rows, rows_per_task(vocab), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* out = grad_logits + t * vocab;
      const float g_entropy = grad_entropy ? grad_entropy[t] : 0.0f;
      check_upstream(grad_logp[t], g_entropy, t);
      if (targets[t] != options.ignore_index) row(t, g_entropy, out);
      else if (stream) simd::stream_zero(out, vocab);
      else std::fill(out, out + vocab, 0.0f);
    }
    if (stream) simd::stream_fence();  // before the pool hands the result back
  });
}

}  // namespace

void logprob_backward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                      const grpo_logprob_options& options, const float* grad_logp, const float* grad_entropy,
                      float* grad_logits) {
  const float scale = 1.0f / options.temperature;
  const bool stream = simd::streams_output(rows * vocab);
  for_each_gradient_row(targets, rows, vocab, options, grad_logp, grad_entropy, grad_logits, stream,
                        [&](int64_t t, float g_entropy, float* out) {
                          const float* x = logits + t * vocab;
                          if (!grad_entropy) {
                            check_target(vocab, t, targets[t]);
                            check_stats(softmax_row_logp_backward(x, vocab, scale, grad_logp[t], targets[t], stream, out), t);
                            return;
                          }
                          const RowResult r = score_row(x, vocab, t, targets[t], scale, true);
                          softmax_row_backward(x, vocab, scale, r.max, r.log_sum, r.entropy, grad_logp[t], g_entropy,
                                               targets[t], out);
                        });
}

void logprob_backward_saved(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                            const grpo_logprob_options& options, const float* lse, const float* entropy,
                            const float* grad_logp, const float* grad_entropy, float* grad_logits) {
  const float scale = 1.0f / options.temperature;
  const bool stream = simd::streams_output(rows * vocab);
  for_each_gradient_row(targets, rows, vocab, options, grad_logp, grad_entropy, grad_logits, stream,
                        [&](int64_t t, float g_entropy, float* out) {
                          check_target(vocab, t, targets[t]);
                          const float h = grad_entropy ? entropy[t] : 0.0f;
                          if (!softmax_row_saved_backward(logits + t * vocab, vocab, scale, lse[t], h, grad_logp[t],
                                                          g_entropy, targets[t], stream, out))
                            fail(GRPO_ERR_NON_FINITE, "logits row %lld contains NaN or +Infinity", static_cast<long long>(t));
                        });
}

}  // namespace grpo

extern "C" grpo_status grpo_logprob_forward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                            const grpo_logprob_options* options, float* logp, float* entropy) {
  return grpo_logprob_forward_lse(logits, targets, rows, vocab, options, logp, entropy, nullptr);
}

extern "C" grpo_status grpo_logprob_forward_lse(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                                const grpo_logprob_options* options, float* logp, float* entropy, float* lse) {
  return grpo::guarded([&] {
    grpo::linear_logprob_checks::logits_options_and_shape(logits, targets, rows, vocab, options);
    if (rows > 0 && !logp) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "logp must not be NULL");
    grpo::logprob_forward(logits, targets, rows, vocab, *options, logp, entropy, lse);
  });
}

extern "C" grpo_status grpo_logprob_backward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                             const grpo_logprob_options* options, const float* grad_logp,
                                             const float* grad_entropy, float* grad_logits) {
  return grpo::guarded([&] {
    grpo::linear_logprob_checks::logits_options_and_shape(logits, targets, rows, vocab, options);
    if (rows > 0 && (!grad_logp || !grad_logits))
      grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "grad_logp and grad_logits must not be NULL");
    grpo::logprob_backward(logits, targets, rows, vocab, *options, grad_logp, grad_entropy, grad_logits);
  });
}

extern "C" grpo_status grpo_logprob_backward_saved(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                                   const grpo_logprob_options* options, const float* lse,
                                                   const float* entropy, const float* grad_logp,
                                                   const float* grad_entropy, float* grad_logits) {
  return grpo::guarded([&] {
    grpo::linear_logprob_checks::logits_options_and_shape(logits, targets, rows, vocab, options);
    if (rows > 0 && (!grad_logp || !grad_logits))
      grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "grad_logp and grad_logits must not be NULL");
    grpo::linear_logprob_checks::saved_stats(targets, rows, options->ignore_index, lse, entropy, grad_entropy);
    grpo::logprob_backward_saved(logits, targets, rows, vocab, *options, lse, entropy, grad_logp, grad_entropy, grad_logits);
  });
}
