#include "loss_reference.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace grpo::reference {

namespace {

double clip_loss(double r, double a, const grpo_surrogate& s) {
  const double rd = s.delta > 0.0 ? std::min(r, s.delta) : r;
  double loss = std::max(-rd * a, -std::clamp(r, 1.0 - s.epsilon_low, 1.0 + s.epsilon_high) * a);
  if (s.dual_clip_c > 0.0 && a < 0.0) loss = std::min(loss, -a * s.dual_clip_c);
  return loss;
}

// VESPO weight of a row with clamped log-ratio sum `sum`, for an advantage of sign `a`.
double vespo_phi(double sum, double a, const grpo_surrogate& s) {
  const double k = a >= 0.0 ? s.vespo_k_pos : s.vespo_k_neg, lambda = a >= 0.0 ? s.vespo_lambda_pos : s.vespo_lambda_neg;
  const double log_w = std::clamp(sum, std::log(1e-8), 20.0);
  const double phi = std::exp(lambda + k * log_w - lambda * std::exp(log_w));
  return std::isfinite(phi) ? phi : 0.0;
}

// The stop-gradient weights (CISPO, VESPO) enter as values: the loss is -w·A·logp.
double token_loss(double r, double a, double logp, double phi, const grpo_surrogate& s) {
  switch (s.type) {
    case GRPO_LOSS_CLIP: return clip_loss(r, a, s);
    case GRPO_LOSS_CISPO_CAP: return -std::min(r, s.cispo_cap) * a * logp;
    case GRPO_LOSS_CISPO_CLAMP: return -std::clamp(r, 1.0 - s.epsilon_low, 1.0 + s.epsilon_high) * a * logp;
    case GRPO_LOSS_SAPO: {
      const double tau = a > 0.0 ? s.sapo_tau_pos : s.sapo_tau_neg;
      return -4.0 / tau * a / (1.0 + std::exp(-tau * (r - 1.0)));
    }
    case GRPO_LOSS_VESPO: return -phi * a * logp;
    case GRPO_LOSS_GPG: return -a * logp;
    default: return 0.0;
  }
}

double kl(double logp, double ref, const grpo_kl_options& o) {
  const double lr = logp - ref;
  double value = lr;
  if (o.estimator == GRPO_KL_ABS) value = std::fabs(lr);
  if (o.estimator == GRPO_KL_K2) value = 0.5 * lr * lr;
  if (o.estimator == GRPO_KL_K3) {
    const double x = o.clamp == GRPO_KL_CLAMP_VERL ? std::clamp(-lr, -20.0, 20.0) : -lr;
    value = std::exp(x) - x - 1.0;
  }
  const bool clamps = o.clamp == GRPO_KL_CLAMP_OPENRLHF || (o.clamp == GRPO_KL_CLAMP_VERL && o.estimator == GRPO_KL_K3);
  return clamps ? std::clamp(value, -10.0, 10.0) : value;
}

double row_weight(const LossInput& in, const grpo_aggregate_options& a, double n, double total) {
  const double sequences = a.sequence_count > 0.0 ? a.sequence_count : in.rows, ga = a.accumulation_steps;
  switch (a.mode) {
    case GRPO_AGG_GLOBAL_TOKEN_MEAN: return 1.0 / (a.token_count > 0.0 ? a.token_count : std::max(total, 1.0));
    case GRPO_AGG_LOCAL_TOKEN_MEAN: return 1.0 / std::max(total, 1.0) / ga;
    case GRPO_AGG_SEQ_MEAN_TOKEN_MEAN: return 1.0 / (std::max(n, 1.0) * sequences * ga);
    case GRPO_AGG_SEQ_MEAN_TOKEN_SUM: return 1.0 / (sequences * ga);
    case GRPO_AGG_TOKEN_SUM_OVER_BL: return 1.0 / (sequences * a.max_completion_length * ga);
    default: return 1.0 / ((a.loss_scale_factor > 0.0 ? a.loss_scale_factor : in.cols) * ga);
  }
}

// GMPO: -mean(A)·exp(mean of the log-ratios clipped on the side that would profit).
double geo_mean_row(const LossInput& in, const grpo_loss_options& o, const std::vector<int64_t>& tokens, int64_t row) {
  double clipped = 0.0, advantage = 0.0;
  for (int64_t i : tokens) {
    const double d = in.old_logp ? in.logp[i] - in.old_logp[i] : 0.0;
    const double a = in.advantages_per_token ? in.advantages[i] : in.advantages[row];
    const double dc = std::clamp(d, -o.surrogate.epsilon_low, o.surrogate.epsilon_high);
    clipped += a > 0.0 ? std::min(d, dc) : (a < 0.0 ? std::max(d, dc) : 0.0);
    advantage += a;
  }
  const double n = tokens.size() + 1e-8;
  const double sequences = o.aggregate.sequence_count > 0.0 ? o.aggregate.sequence_count : in.rows;
  return -advantage / n * std::exp(clipped / n) / (sequences * o.aggregate.accumulation_steps);
}

}  // namespace

double policy_loss(const LossInput& in, const grpo_loss_options& o) {
  double total = 0.0, loss = 0.0;
  for (int64_t i = 0; i < in.rows * in.cols; ++i) total += in.mask[i] ? 1.0 : 0.0;
  for (int64_t row = 0; row < in.rows; ++row) {
    std::vector<int64_t> tokens;
    std::map<int64_t, double> sum, count;
    double vespo_sum = 0.0;
    const auto bin = [&](int64_t i) -> int64_t {
      return o.is_level == GRPO_IS_ITEM ? std::clamp<int64_t>(in.segments[i], 0, o.num_items) : 0;
    };
    for (int64_t i = row * in.cols; i < (row + 1) * in.cols; ++i) {
      if (!in.mask[i]) continue;
      const double d = in.old_logp ? in.logp[i] - in.old_logp[i] : 0.0;
      tokens.push_back(i), sum[bin(i)] += d, count[bin(i)] += 1.0, vespo_sum += std::clamp(d, -20.0, 20.0);
    }
    const double weight = row_weight(in, o.aggregate, tokens.size(), total);
    for (int64_t i : tokens) {
      const double d = in.old_logp ? in.logp[i] - in.old_logp[i] : 0.0;
      double w = o.is_level == GRPO_IS_TOKEN ? d : sum[bin(i)] / count[bin(i)];
      if (o.surrogate.log_ratio_clamp > 0.0) w = std::clamp(w, -o.surrogate.log_ratio_clamp, o.surrogate.log_ratio_clamp);
      const double r = std::exp(w), a = in.advantages_per_token ? in.advantages[i] : in.advantages[row];
      const double policy = token_loss(r, a, in.logp[i], vespo_phi(vespo_sum, a, o.surrogate), o.surrogate);
      const double k = in.ref_logp ? kl(in.logp[i], in.ref_logp[i], o.kl) * (o.kl.bias_correction ? r : 1.0) : 0.0;
      loss += weight * (policy + o.kl.beta * k);
    }
    if (o.surrogate.type == GRPO_LOSS_GEO_MEAN) loss += geo_mean_row(in, o, tokens, row);
  }
  return loss;
}

}  // namespace grpo::reference
