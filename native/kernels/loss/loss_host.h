// The host-side steps of the policy loss that the CPU kernels (loss.cc) and the CUDA backend
// (native/cuda/loss.cu) share, so both reject the same inputs with the same statuses and messages
// and finish the same way: argument checks, the entropy threshold, and the final report (the first
// bad input, the zeroed gradient of an empty verl batch, the statistics).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "grpo/loss.h"
#include "loss.h"
#include "loss_token.h"
#include "runtime/error.h"

namespace grpo::loss_host {

inline void check_enum(int32_t value, int32_t last, const char* name) {
  if (value < 0 || value > last) fail(GRPO_ERR_INVALID_ARGUMENT, "%s %d is unknown", name, value);
}

inline void check_positive(double value, const char* name, bool zero_allowed) {
  if (!std::isfinite(value) || value < 0.0 || (!zero_allowed && value == 0.0))
    fail(GRPO_ERR_VALUE_RANGE, "%s must be finite and %s 0 (got %g)", name, zero_allowed ? ">=" : ">", value);
}

inline void check_options(const grpo_loss_options* options) {
  if (!options) fail(GRPO_ERR_INVALID_ARGUMENT, "options must not be NULL");
  const grpo_loss_options& o = *options;
  check_enum(o.surrogate.type, GRPO_LOSS_NONE, "surrogate.type");
  check_enum(o.is_level, GRPO_IS_ITEM, "is_level");
  check_enum(o.kl.estimator, GRPO_KL_K3, "kl.estimator");
  check_enum(o.kl.clamp, GRPO_KL_CLAMP_OPENRLHF, "kl.clamp");
  check_enum(o.aggregate.mode, GRPO_AGG_ALL_POSITIONS_LENGTH_WEIGHTED, "aggregate.mode");
  if (o.aggregate.mode == GRPO_AGG_ALL_POSITIONS_LENGTH_WEIGHTED && o.is_level == GRPO_IS_ITEM)
    fail(GRPO_ERR_INVALID_ARGUMENT, "aggregate.mode all-positions length-weighted (TRL luspo) has no item level");
  const grpo_surrogate& s = o.surrogate;
  for (double v : {s.epsilon_low, s.epsilon_high, s.delta, s.dual_clip_c, s.log_ratio_clamp, s.cispo_cap, s.vespo_k_pos,
                   s.vespo_lambda_pos, s.vespo_k_neg, s.vespo_lambda_neg, o.kl.beta, o.aggregate.token_count,
                   o.aggregate.sequence_count, o.aggregate.loss_scale_factor})
    check_positive(v, "every surrogate, KL and count option", true);
  check_positive(s.sapo_tau_pos, "sapo_tau_pos", false);
  check_positive(s.sapo_tau_neg, "sapo_tau_neg", false);
  if (!(o.aggregate.accumulation_steps >= 1.0)) fail(GRPO_ERR_VALUE_RANGE, "accumulation_steps must be >= 1");
  if (o.aggregate.mode == GRPO_AGG_TOKEN_SUM_OVER_BL) check_positive(o.aggregate.max_completion_length, "max_completion_length", false);
  if (!(o.top_entropy_quantile > 0.0 && o.top_entropy_quantile <= 1.0))
    fail(GRPO_ERR_VALUE_RANGE, "top_entropy_quantile must be in (0, 1] (got %g)", o.top_entropy_quantile);
  if (o.is_level == GRPO_IS_ITEM && o.num_items < 1) fail(GRPO_ERR_VALUE_RANGE, "num_items must be >= 1 at the item level");
}

inline void check_pointers(const LossProblem& p, const float* grad_logp) {
  if (p.rows < 0 || p.cols < 0) fail(GRPO_ERR_SHAPE, "rows and cols must be >= 0");
  if (p.rows == 0 || p.cols == 0) return;
  if (!p.logp || !p.advantages || !p.mask || !grad_logp)
    fail(GRPO_ERR_INVALID_ARGUMENT, "logp, advantages, mask and grad_logp must not be NULL");
  if (p.options.kl.beta != 0.0 && !p.ref_logp) fail(GRPO_ERR_INVALID_ARGUMENT, "ref_logp is needed when kl.beta != 0");
  if (p.options.is_level == GRPO_IS_ITEM && !p.segments) fail(GRPO_ERR_INVALID_ARGUMENT, "segments are needed at the item level");
  if (p.options.top_entropy_quantile < 1.0 && !p.entropy)
    fail(GRPO_ERR_INVALID_ARGUMENT, "entropy is needed when top_entropy_quantile < 1");
}

// torch.quantile(linear) of the masked entropies at q; keeps tokens with entropy >= it.
inline float entropy_threshold(const LossProblem& p, double q) {
  std::vector<float> values;
  for (int64_t t = 0; t < p.rows * p.cols; ++t)
    if (p.mask[t]) values.push_back(p.entropy[t]);
  if (values.empty()) return 0.0f;
  const double position = q * (values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(position)), hi = static_cast<size_t>(std::ceil(position));
  std::nth_element(values.begin(), values.begin() + lo, values.end());
  const float low = values[lo];
  std::nth_element(values.begin(), values.begin() + hi, values.end());
  return static_cast<float>(low + (values[hi] - low) * (position - lo));
}

// The entropy at or above which the policy term is kept (-Infinity: every token).
inline float keep_threshold(const LossProblem& p) {
  return p.options.top_entropy_quantile < 1.0 ? entropy_threshold(p, 1.0 - p.options.top_entropy_quantile)
                                              : -std::numeric_limits<float>::infinity();
}

inline void write_stats(const LossProblem& p, const LossPartial& s, grpo_loss_stats* out) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const double n = s.tokens > 0.0 ? s.tokens : kNaN, rows = p.rows > 0 ? static_cast<double>(p.rows) : kNaN;
  const bool empty_nan = p.options.aggregate.empty_is_nan && s.tokens == 0.0;
  const bool per_row = loss::flags_per_row(p);
  const double phi = p.options.surrogate.type == GRPO_LOSS_VESPO ? s.phi / (p.advantages_per_token ? n : rows) : kNaN;
  *out = {empty_nan ? kNaN : s.loss, empty_nan ? kNaN : s.policy, p.ref_logp ? s.kl / n : kNaN,
          per_row ? s.row_low / rows : s.low / n, per_row ? s.row_high / rows : s.high / n,
          per_row ? s.row_region / rows : s.region / n, s.dual / n, s.ratio / n, s.tokens > 0.0 ? s.ratio_min : kNaN,
          s.tokens > 0.0 ? s.ratio_max : kNaN, p.entropy ? s.entropy / n : kNaN, s.ppo_kl / n, s.tokens, phi};
}

// After the row passes: fails on the first bad input, zeroes the gradient of an empty batch under
// empty_is_nan, writes the statistics.
inline void finish(const LossProblem& p, const LossPartial& total, float* grad_logp, grpo_loss_stats* stats) {
  if (total.bad_index >= 0)
    fail(total.bad_what == kBadSegment ? GRPO_ERR_INDEX_RANGE : GRPO_ERR_NON_FINITE, "%s at row %lld, column %lld",
         total.bad_what == kBadSegment ? "segments holds a value below -1"
                                       : "an input the loss reads (logp, old, ref, advantage, entropy where masked in; "
                                         "logp, old, ref, advantage at padding in the all-positions mode) is not finite",
         static_cast<long long>(total.bad_index / p.cols), static_cast<long long>(total.bad_index % p.cols));
  if (p.options.aggregate.empty_is_nan && total.tokens == 0.0) std::fill(grad_logp, grad_logp + p.rows * p.cols, 0.0f);
  if (stats) write_stats(p, total, stats);
}

}  // namespace grpo::loss_host
