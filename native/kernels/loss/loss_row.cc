// One row of the policy loss: importance-sampling log-weights, per-token terms with their
// gradient, and the routing of d(loss)/d(log-weight) back to the tokens of a sequence or item.
#include <algorithm>
#include <cmath>

#include "loss.h"
#include "loss_token.h"

namespace grpo {

namespace {

bool per_token_ratio(int32_t level) { return level == GRPO_IS_TOKEN; }
bool routes_to_bins(int32_t level) { return level == GRPO_IS_SEQUENCE || level == GRPO_IS_ITEM; }

using loss::advantage_at;
using loss::bin_of;
using loss::log_ratio_at;

void flag(LossPartial& partial, int64_t index, int what) {
  if (partial.bad_index < 0) partial.bad_index = index, partial.bad_what = what;
}

void add_flags(LossPartial& partial, bool low, bool high, bool dual) {
  partial.low += low, partial.high += high, partial.region += low || high, partial.dual += dual;
}

// Whether the row had a low / high clipped token (the per-row clip ratios, loss::flags_per_row).
void add_row_flags(LossPartial& partial, bool low, bool high) {
  partial.row_low += low, partial.row_high += high, partial.row_region += low || high;
}

// VESPO's φ of a row for either advantage sign.
struct Phi {
  float pos, neg;
  float of(float a) const { return a >= 0.0f ? pos : neg; }
};

// A padding position of the all-positions mode: its loss and gradient, no statistics (TRL's [B, T] mean).
void padding_term(const LossProblem& p, int64_t row, int64_t index, double weight, const Phi& phi, RowScratch& s,
                  float* grad, LossPartial& partial) {
  const grpo_loss_options& o = p.options;
  const float d = log_ratio_at(p, index), a = advantage_at(p, row, index);
  const float log_weight = per_token_ratio(o.is_level) ? d : static_cast<float>(s.log_ratio[0]);
  const loss::TokenShare t = loss::token_share(o, log_weight, p.logp[index], a, phi.of(a), p.ref_logp ? p.ref_logp + index : nullptr,
                                               loss::keeps_padding_policy(p), static_cast<float>(weight));
  if (routes_to_bins(o.is_level)) s.grad[0] += t.routed;
  grad[index] = routes_to_bins(o.is_level) ? t.direct : t.direct + t.routed;
  partial.loss += weight * t.loss, partial.policy += weight * t.policy;
}

// Pass 2: per-token terms; token-level ratios are routed here, sequence / item ones gathered per bin.
void token_terms(const LossProblem& p, int64_t row, double weight, const Phi& phi, RowScratch& s, float* grad,
                 LossPartial& partial) {
  const grpo_loss_options& o = p.options;
  const float w = static_cast<float>(weight);
  for (int64_t index = row * p.cols; index < (row + 1) * p.cols; ++index) {
    if (!p.mask[index]) {
      if (loss::counts_padding(p)) padding_term(p, row, index, weight, phi, s, grad, partial);
      else grad[index] = 0.0f;
      continue;
    }
    const float d = log_ratio_at(p, index), logp = p.logp[index], a = advantage_at(p, row, index);
    const int64_t bin = bin_of(p, index);
    const float log_weight = per_token_ratio(o.is_level) ? d : static_cast<float>(s.log_ratio[bin]);
    const loss::TokenShare t = loss::token_share(o, log_weight, logp, a, phi.of(a), p.ref_logp ? p.ref_logp + index : nullptr,
                                                 loss::keeps_policy(p, index), w);
    if (routes_to_bins(o.is_level)) s.grad[bin] += t.routed;
    grad[index] = routes_to_bins(o.is_level) ? t.direct : t.direct + t.routed;
    partial.loss += weight * t.loss, partial.policy += weight * t.policy;
    partial.kl += t.kl, partial.ratio += t.ratio, partial.ppo_kl -= loss::ppo_log_ratio(o, d), partial.tokens += 1.0;
    if (o.surrogate.type == GRPO_LOSS_VESPO && p.advantages_per_token) partial.phi += phi.of(a);
    partial.ratio_min = std::min<double>(partial.ratio_min, t.ratio), partial.ratio_max = std::max<double>(partial.ratio_max, t.ratio);
    if (p.entropy) partial.entropy += p.entropy[index];
    add_flags(partial, t.low, t.high, t.dual);
  }
}

// Pass 3 (sequence / item levels): d(log-weight of bin)/d(logp_t) = 1 / tokens in the bin.
void route_bins(const LossProblem& p, int64_t row, const RowScratch& s, float* grad) {
  for (int64_t index = row * p.cols; index < (row + 1) * p.cols; ++index) {
    if (!p.mask[index]) continue;
    const int64_t bin = bin_of(p, index);
    grad[index] += static_cast<float>(s.grad[bin] / std::max(s.count[bin], 1.0));
  }
}

// GMPO (verl geo_mean): ℓ_i = −mean_t(A)·exp(mean_t(d*)), d* = the log-ratio clipped on the side that
// would profit from it; its policy term replaces the token terms (which are 0 for this type).
void geo_mean_row(const LossProblem& p, int64_t row, double tokens, float* grad, LossPartial& partial) {
  const float lo = static_cast<float>(-p.options.surrogate.epsilon_low), hi = static_cast<float>(p.options.surrogate.epsilon_high);
  double clipped_sum = 0.0, advantage_sum = 0.0;
  for (int64_t index = row * p.cols; index < (row + 1) * p.cols; ++index) {
    if (!p.mask[index]) continue;
    const float d = log_ratio_at(p, index), a = advantage_at(p, row, index), dc = loss::clamp_float(d, lo, hi);
    clipped_sum += loss::geo_clipped(d, a, lo, hi);
    advantage_sum += a;
    add_flags(partial, d != dc && a < 0.0f, d != dc && a > 0.0f, false);
  }
  const double denominator = tokens + 1e-8;
  const double ratio = std::exp(clipped_sum / denominator), value = -advantage_sum / denominator * ratio;
  const double weight = loss::geo_row_weight(p);
  partial.loss += weight * value, partial.policy += weight * value;
  for (int64_t index = row * p.cols; index < (row + 1) * p.cols; ++index) {
    if (!p.mask[index]) continue;
    if (loss::geo_passes(log_ratio_at(p, index), advantage_at(p, row, index), lo, hi))
      grad[index] += static_cast<float>(weight * value / denominator);
  }
}

}  // namespace

// Pass 1: checks the inputs and fills the per-bin mean log-ratios (log of the geometric-mean ratio).
RowSums bin_log_ratios(const LossProblem& p, int64_t row, RowScratch& s, LossPartial& partial) {
  std::fill(s.log_ratio.begin(), s.log_ratio.end(), 0.0), std::fill(s.count.begin(), s.count.end(), 0.0);
  std::fill(s.grad.begin(), s.grad.end(), 0.0);
  RowSums sums;
  for (int64_t index = row * p.cols; index < (row + 1) * p.cols; ++index) {
    if (!p.mask[index]) {
      if (loss::counts_padding(p) && !loss::inputs_finite(p, row, index, false)) flag(partial, index, kBadValue);
      continue;
    }
    if (loss::checks_segments(p) && p.segments[index] < -1) flag(partial, index, kBadSegment);
    if (!loss::inputs_finite(p, row, index)) flag(partial, index, kBadValue);
    const float d = log_ratio_at(p, index);
    const int64_t bin = bin_of(p, index);
    s.log_ratio[bin] += d, s.count[bin] += 1.0, sums.tokens += 1.0;
    sums.vespo_log_ratio += loss::clamp_float(d, -20.0f, 20.0f);
  }
  for (size_t b = 0; b < s.log_ratio.size(); ++b) s.log_ratio[b] /= std::max(s.count[b], 1.0);
  return sums;
}

void loss_row(const LossProblem& p, int64_t row, RowScratch& scratch, float* grad_logp, LossPartial& partial) {
  const RowSums sums = bin_log_ratios(p, row, scratch, partial);
  if (partial.bad_index >= 0) return;
  const grpo_surrogate& o = p.options.surrogate;
  const Phi phi{loss::vespo_phi(sums.vespo_log_ratio, o.vespo_k_pos, o.vespo_lambda_pos),
                loss::vespo_phi(sums.vespo_log_ratio, o.vespo_k_neg, o.vespo_lambda_neg)};
  if (o.type == GRPO_LOSS_VESPO && !p.advantages_per_token) partial.phi += phi.of(p.advantages[row]);
  const double low = partial.low, high = partial.high;
  token_terms(p, row, loss::row_weight(p, sums.tokens), phi, scratch, grad_logp, partial);
  add_row_flags(partial, partial.low > low, partial.high > high);
  if (routes_to_bins(p.options.is_level)) route_bins(p, row, scratch, grad_logp);
  if (p.options.surrogate.type == GRPO_LOSS_GEO_MEAN) geo_mean_row(p, row, sums.tokens, grad_logp, partial);
}

}  // namespace grpo
