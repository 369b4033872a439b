// The scalar math of the policy loss, one copy for both backends: the surrogate terms with their
// derivatives, the KL estimators, the importance ratio, one token's share of loss and gradient,
// GMPO's clipping, and the per-row helpers (bins, weights, input checks). The CPU's row loop
// (loss_row.cc) and the CUDA kernels (native/cuda/loss.cu) call these; the vectorised clip row
// (loss_fast.cc) restates the clip and KL terms on GCC vectors.
// On the CPU GRPO_HD is GRPO_INLINE, what these functions always were; under nvcc it adds
// __host__ __device__. e^x is the CPU's vectorisable polynomial there, the device's expf here.
#pragma once

#include <cmath>
#include <cstdint>

#include "grpo/loss.h"
#include "loss.h"

#ifdef __CUDACC__
#define GRPO_HD __host__ __device__ __forceinline__
#define GRPO_HD_CALL __host__ __device__ inline
#else
#include "loss_terms.h"
#define GRPO_HD GRPO_INLINE
#define GRPO_HD_CALL inline
#endif

// The two builds of these inline functions differ (e^x), so each lives in its own inline namespace:
// a program linking both backends (native/cuda/tests/parity_main.cc) keeps them apart.
#ifdef __CUDACC__
#define GRPO_LOSS_BUILD device_build
#else
#define GRPO_LOSS_BUILD host_build
#endif

namespace grpo::loss {
inline namespace GRPO_LOSS_BUILD {

// e^x with x clamped to [-87, 87] (saturates instead of reaching 0 / +Infinity).
GRPO_HD float exp_saturating(float x) {
#ifdef __CUDACC__
  return expf(x < -87.0f ? -87.0f : (x > 87.0f ? 87.0f : x));
#else
  return exp_any(x);
#endif
}

// std::clamp's comparisons (usable on the device without relaxed constexpr).
GRPO_HD float clamp_float(float x, float lo, float hi) { return x < lo ? lo : (hi < x ? hi : x); }
GRPO_HD double at_least(double x, double lo) { return x < lo ? lo : x; }

// One token's policy term: value, d/d(ratio) (routed through the IS level), d/d(logp) directly
// (CISPO / GPG / VESPO use sg(weight)·A·logp), and its clip flags.
struct Term {
  float value, d_ratio, d_logp;
  bool low, high, dual;
};

// TRL grpo (+delta) and verl vanilla (+dual clip): max(-r'·A, -clamp(r, 1-εl, 1+εh)·A).
GRPO_HD Term clip_term(float r, float a, const grpo_surrogate& s) {
  const float lo = static_cast<float>(1.0 - s.epsilon_low), hi = static_cast<float>(1.0 + s.epsilon_high);
  const bool capped = s.delta > 0.0 && r > static_cast<float>(s.delta);
  const float rd = capped ? static_cast<float>(s.delta) : r;
  const float clamped = r < lo ? lo : (r > hi ? hi : r);
  const float unclipped = -rd * a, clipped = -clamped * a;
  Term t{unclipped, capped ? 0.0f : -a, 0.0f, rd < lo && a < 0.0f, rd > hi && a > 0.0f, false};
  if (clipped > unclipped) t.value = clipped, t.d_ratio = (r >= lo && r <= hi) ? -a : 0.0f;
  const float bound = static_cast<float>(-a * s.dual_clip_c);
  if (s.dual_clip_c > 0.0 && a < 0.0f && t.value > bound) t.value = bound, t.d_ratio = 0.0f, t.dual = true;
  return t;
}

GRPO_HD Term cispo_cap_term(float r, float a, float logp, const grpo_surrogate& s) {
  const float cap = static_cast<float>(s.cispo_cap);
  const float w = r < cap ? r : cap;
  return {-w * a * logp, 0.0f, -w * a, false, r > cap && a > 0.0f, false};
}

GRPO_HD Term cispo_clamp_term(float r, float a, float logp, const grpo_surrogate& s) {
  const float lo = static_cast<float>(1.0 - s.epsilon_low), hi = static_cast<float>(1.0 + s.epsilon_high);
  const float w = r < lo ? lo : (r > hi ? hi : r);
  return {-w * a * logp, 0.0f, -w * a, r < lo, r > hi, false};
}

GRPO_HD Term sapo_term(float r, float a, const grpo_surrogate& s) {
  const float tau = static_cast<float>(a > 0.0f ? s.sapo_tau_pos : s.sapo_tau_neg);
  const float sigma = 1.0f / (1.0f + exp_saturating(-tau * (r - 1.0f)));
  return {-sigma * 4.0f / tau * a, -4.0f * a * sigma * (1.0f - sigma), 0.0f, false, false, false};
}

// phi: the VESPO sequence weight for this token's advantage sign (no gradient).
GRPO_HD Term surrogate(float r, float a, float logp, float phi, const grpo_surrogate& s) {
  switch (s.type) {
    case GRPO_LOSS_CLIP: return clip_term(r, a, s);
    case GRPO_LOSS_CISPO_CAP: return cispo_cap_term(r, a, logp, s);
    case GRPO_LOSS_CISPO_CLAMP: return cispo_clamp_term(r, a, logp, s);
    case GRPO_LOSS_SAPO: return sapo_term(r, a, s);
    case GRPO_LOSS_VESPO: return {-phi * a * logp, 0.0f, -phi * a, false, false, false};
    case GRPO_LOSS_GPG: return {-a * logp, 0.0f, -a, false, false, false};
    default: return {0.0f, 0.0f, 0.0f, false, false, false};  // GEO_MEAN: a row-level term; NONE: no term
  }
}

// VESPO φ = exp(λ + k·log w − λ·w), log w = clamp(s, ln 1e-8, 20), s = Σ m·clamp(log r, ±20); NaN/inf → 0.
GRPO_HD_CALL float vespo_phi(double log_ratio_sum, double k, double lambda) {
  const double log_w = std::fmin(std::fmax(log_ratio_sum, std::log(1e-8)), 20.0);
  const double phi = std::exp(lambda + k * log_w - lambda * std::exp(log_w));
  return std::isfinite(phi) ? static_cast<float>(phi) : 0.0f;
}

struct Kl {
  float value, d_logp;
};

GRPO_HD Kl kl_term(float logp, float ref, const grpo_kl_options& o) {
  const float lr = logp - ref;
  Kl k{lr, 1.0f};
  if (o.estimator == GRPO_KL_ABS) k = {std::fabs(lr), lr > 0.0f ? 1.0f : (lr < 0.0f ? -1.0f : 0.0f)};
  if (o.estimator == GRPO_KL_K2) k = {0.5f * lr * lr, lr};
  if (o.estimator == GRPO_KL_K3) {
    float x = -lr, pass = 1.0f;
    if (o.clamp == GRPO_KL_CLAMP_VERL && std::fabs(x) > 20.0f) x = x > 0.0f ? 20.0f : -20.0f, pass = 0.0f;
    const float e = exp_saturating(x);
    k = {e - x - 1.0f, (1.0f - e) * pass};
  }
  const bool clamps_value = o.clamp == GRPO_KL_CLAMP_OPENRLHF || (o.clamp == GRPO_KL_CLAMP_VERL && o.estimator == GRPO_KL_K3);
  if (clamps_value && std::fabs(k.value) > 10.0f) k = {k.value > 0.0f ? 10.0f : -10.0f, 0.0f};
  if (o.k2_gradient) k.d_logp = lr;  // verl's straight-through "+" estimators: the gradient of ½·lr²
  return k;
}

struct Ratio {
  float value;
  float pass;  // 1 when the log-ratio clamp did not bind
};

GRPO_HD Ratio ratio_of(float log_weight, double clamp) {
  if (clamp > 0.0 && std::fabs(log_weight) > clamp) {
    return {exp_saturating(static_cast<float>(log_weight > 0.0f ? clamp : -clamp)), 0.0f};
  }
  return {exp_saturating(log_weight), 1.0f};
}

// One masked token's share: `loss` and `policy` before the row weight, gradient parts already
// weighted by w: `direct` belongs to this token, `routed` goes through the ratio (to this token at
// the token levels, to its bin at the sequence / item levels). `kl` is the logged KL (× r with bias
// correction, as TRL logs it).
struct TokenShare {
  float loss, policy, kl, ratio, direct, routed;
  bool low, high, dual;
};

// log_weight: the token's own log-ratio or its bin's mean; ref: NULL without a KL reference;
// keep: the entropy filter's verdict; w: the row's aggregation weight.
GRPO_HD TokenShare token_share(const grpo_loss_options& o, float log_weight, float logp, float a, float phi,
                               const float* ref, bool keep, float w) {
  const float beta = static_cast<float>(o.kl.beta);
  const Ratio r = ratio_of(log_weight, o.surrogate.log_ratio_clamp);
  const Term term = surrogate(r.value, a, logp, phi, o.surrogate);
  const Kl kl = ref ? kl_term(logp, *ref, o.kl) : Kl{0.0f, 0.0f};
  const float bias = o.kl.bias_correction ? r.value : 1.0f;
  const float policy = keep ? term.value : 0.0f;
  const float d_ratio = (keep ? term.d_ratio : 0.0f) + (o.kl.bias_correction ? beta * kl.value : 0.0f);
  const float routed = w * d_ratio * r.value * r.pass;
  const float direct = w * ((keep ? term.d_logp : 0.0f) + beta * kl.d_logp * bias);
  return {policy + beta * kl.value * bias, policy, kl.value * bias, r.value, direct, routed, term.low, term.high, term.dual};
}

// GMPO (verl geo_mean): a token's log-ratio d clipped to [lo, hi] only on the side that would profit.
GRPO_HD float geo_clipped(float d, float a, float lo, float hi) {
  const float dc = clamp_float(d, lo, hi);
  return a > 0.0f ? (dc < d ? dc : d) : (a < 0.0f ? (d < dc ? dc : d) : 0.0f);
}

// Whether the gradient of exp(mean clipped d) reaches this token (its clip did not bind).
GRPO_HD bool geo_passes(float d, float a, float lo, float hi) { return (a > 0.0f && d <= hi) || (a < 0.0f && d >= lo); }

// ---- Per-row helpers over a LossProblem (host arrays on the CPU, device arrays on the GPU) ----

GRPO_HD float advantage_at(const LossProblem& p, int64_t row, int64_t index) {
  return p.advantages_per_token ? p.advantages[index] : p.advantages[row];
}

GRPO_HD float log_ratio_at(const LossProblem& p, int64_t index) {
  return p.old_logp ? p.logp[index] - p.old_logp[index] : 0.0f;
}

// with_entropy: false for a padding position, whose entropy is never read.
GRPO_HD bool inputs_finite(const LossProblem& p, int64_t row, int64_t index, bool with_entropy = true) {
  bool ok = std::isfinite(p.logp[index]) && std::isfinite(advantage_at(p, row, index));
  if (p.old_logp) ok = ok && std::isfinite(p.old_logp[index]);
  if (p.ref_logp) ok = ok && std::isfinite(p.ref_logp[index]);
  if (p.entropy && with_entropy) ok = ok && std::isfinite(p.entropy[index]);
  return ok;
}

GRPO_HD bool keeps_policy(const LossProblem& p, int64_t index) { return !p.entropy || p.entropy[index] >= p.keep_threshold; }

// GRPO_AGG_ALL_POSITIONS_LENGTH_WEIGHTED: padding positions carry loss and gradient (not statistics).
GRPO_HD bool counts_padding(const LossProblem& p) { return p.options.aggregate.mode == GRPO_AGG_ALL_POSITIONS_LENGTH_WEIGHTED; }

// TRL's entropy mask is `entropy_mask & mask`: a padding position keeps its policy term only unfiltered.
GRPO_HD bool keeps_padding_policy(const LossProblem& p) { return p.options.top_entropy_quantile >= 1.0; }

// TRL logs a sequence-level coef_1 [B, 1] (with [B] advantages) once per sequence: its clip flags
// are per row, their means over rows.
GRPO_HD bool flags_per_row(const LossProblem& p) {
  return p.options.is_level == GRPO_IS_SEQUENCE && !p.advantages_per_token && p.options.surrogate.type != GRPO_LOSS_GEO_MEAN;
}

// The log-ratio of verl's ppo_kl: after the ratio's log clamp at the token level (verl ±20), raw at
// the sequence levels (verl gspo logs the unclamped token log-ratios).
GRPO_HD float ppo_log_ratio(const grpo_loss_options& o, float d) {
  const float c = static_cast<float>(o.surrogate.log_ratio_clamp);
  return o.is_level == GRPO_IS_TOKEN && o.surrogate.log_ratio_clamp > 0.0 ? clamp_float(d, -c, c) : d;
}

// The importance-sampling bin of a token (0, or its item at the item level; K = overflow).
GRPO_HD int64_t bin_of(const LossProblem& p, int64_t index) {
  if (p.options.is_level != GRPO_IS_ITEM) return 0;
  const int64_t segment = p.segments[index];
  return segment < 0 ? 0 : (segment > p.options.num_items ? p.options.num_items : segment);
}

// The CPU runs the clip surrogate through loss_fast.cc, whose token level never reads segments.
GRPO_HD bool fast_row_applies(const LossProblem& p) { return p.options.surrogate.type == GRPO_LOSS_CLIP; }
GRPO_HD bool checks_segments(const LossProblem& p) {
  return p.segments && !(fast_row_applies(p) && p.options.is_level == GRPO_IS_TOKEN);
}

// The counts every row weight needs, from this call's Σ mask.
GRPO_HD void resolve_counts(LossProblem& p, double total_tokens) {
  const grpo_aggregate_options& a = p.options.aggregate;
  p.total_tokens = total_tokens;
  p.token_count = a.token_count > 0.0 ? a.token_count : at_least(total_tokens, 1.0);
  p.sequence_count = a.sequence_count > 0.0 ? a.sequence_count : static_cast<double>(p.rows > 1 ? p.rows : 1);
  p.loss_scale_factor = a.loss_scale_factor > 0.0 ? a.loss_scale_factor : static_cast<double>(p.cols > 1 ? p.cols : 1);
}

// Aggregation weight of each masked token of a row holding n of them.
GRPO_HD_CALL double row_weight(const LossProblem& p, double n) {
  const grpo_aggregate_options& a = p.options.aggregate;
  const double ga = a.accumulation_steps;
  switch (a.mode) {
    case GRPO_AGG_GLOBAL_TOKEN_MEAN: return 1.0 / p.token_count;
    case GRPO_AGG_LOCAL_TOKEN_MEAN: return 1.0 / at_least(p.total_tokens, 1.0) / ga;
    case GRPO_AGG_SEQ_MEAN_TOKEN_MEAN: return 1.0 / (at_least(n, 1.0) * p.sequence_count * ga);
    case GRPO_AGG_SEQ_MEAN_TOKEN_SUM: return 1.0 / (p.sequence_count * ga);
    case GRPO_AGG_TOKEN_SUM_OVER_BL: return 1.0 / (p.sequence_count * a.max_completion_length * ga);
    case GRPO_AGG_ALL_POSITIONS_LENGTH_WEIGHTED:
      return n / (p.sequence_count * static_cast<double>(p.cols > 1 ? p.cols : 1) * ga);
    default: return 1.0 / (p.loss_scale_factor * ga);
  }
}

// GMPO's row weight: a mean over sequence_count rows, whatever the aggregation.
GRPO_HD double geo_row_weight(const LossProblem& p) {
  return 1.0 / (p.sequence_count * p.options.aggregate.accumulation_steps);
}

}  // namespace GRPO_LOSS_BUILD
}  // namespace grpo::loss
