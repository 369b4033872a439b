// The vectorised row of the clip surrogate (TRL grpo/bnpo/dapo/dr_grpo/luspo, verl vanilla/gspo,
// Rank-GRPO) at every importance-sampling level, with any KL estimator and clamp and entropy
// masking. One pass over the row, branch-free on GCC vectors of kLanes floats (GRPO_CLONES).
// Masked-out tokens are selected away, never multiplied by 0, so non-finite padding cannot
// leak into the sums.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "loss.h"
#include "loss_terms.h"
#include "loss_token.h"
#include "runtime/simd.h"

namespace grpo {

namespace {

using loss::bin_of;
using loss::row_weight;
using loss::clamp_to;
using loss::exp_any;
using loss::splat;
using loss::vf;
using loss::vi;
constexpr int kLanes = loss::kVectorLanes;

// Per-lane sums of one row; combined lane by lane in a fixed order.
struct Lanes {
  float loss[kLanes], policy[kLanes], kl[kLanes], low[kLanes], high[kLanes], dual[kLanes], ratio[kLanes];
  float ratio_min[kLanes], ratio_max[kLanes], entropy[kLanes], ppo_kl[kLanes], bad[kLanes];
};

// One row's arrays. w: the log-weight of each token's ratio (its own log-ratio, or its sequence's
// or item's mean). grad receives the direct part of d(loss)/d(logp), routed the part through the ratio.
struct Row {
  const float *logp, *old, *ref, *adv, *entropy, *w;
  const uint8_t* mask;
  float *grad, *routed;
  int64_t cols;
};

// Every option as a number, so the loop holds no branch on an option: "off" is an infinite limit
// or a zero weight.
// ppo_clamp: the clamp of ppo_kl's log-ratio (loss::ppo_log_ratio); padding: 1 when padding
// positions carry loss (all-positions mode), keep_padding: 1 when their policy term is kept.
struct Scalars {
  float weight, lo, hi, delta, dual_c, clamp, beta, threshold, bias;
  float k1, abs, k2, k3, k2_gradient;  // one-hot KL estimator; 1: the k2 gradient (verl "+")
  float k3_x_limit, kl_value_limit, ppo_clamp, padding, keep_padding;
};

constexpr float kInf = std::numeric_limits<float>::infinity();

typedef uint8_t vu8 __attribute__((vector_size(kLanes)));

GRPO_INLINE vf load(const float* x) {
  vf v;
  std::memcpy(&v, x, sizeof v);
  return v;
}

GRPO_INLINE vf select(const vi& c, const vf& x, const vf& y) { return c ? x : y; }
GRPO_INLINE vf select(const vi& c, const vf& x) { return c ? x : vf{}; }

// KL value and its derivative in logp (as loss::kl_term), every estimator computed and weighted.
GRPO_INLINE vf kl_value(const vf& lr, const Scalars& s, vf& d_logp) {
  const vf x = clamp_to(-lr, splat<vf>(-s.k3_x_limit), splat<vf>(s.k3_x_limit));
  const vf e = exp_any(x);
  const vf k3_pass = select((-lr <= splat<vf>(s.k3_x_limit)) & (-lr >= splat<vf>(-s.k3_x_limit)), splat<vf>(1.0f));
  const vf sign = select(lr > vf{}, splat<vf>(1.0f), select(lr < vf{}, splat<vf>(-1.0f)));
  const vf value = s.k1 * lr + s.abs * sign * lr + s.k2 * 0.5f * lr * lr + s.k3 * (e - x - 1.0f);
  const vf d = s.k1 + s.abs * sign + s.k2 * lr + s.k3 * (1.0f - e) * k3_pass;
  const vi out = (value > splat<vf>(s.kl_value_limit)) | (value < splat<vf>(-s.kl_value_limit));
  d_logp = s.k2_gradient != 0.0f ? lr : select(out, vf{}, d);
  return select(out, select(value > vf{}, splat<vf>(s.kl_value_limit), splat<vf>(-s.kl_value_limit)), value);
}

struct Sums {
  vf loss, policy, kl, low, high, dual, ratio, ratio_min, ratio_max, entropy, ppo_kl, bad;
};

// kLanes tokens: the clip surrogate of loss::clip_term and the KL term, with their gradient.
GRPO_INLINE void block(const Row& r, const Scalars& s, int64_t t, Sums& acc) {
  vu8 mask_bytes;
  std::memcpy(&mask_bytes, r.mask + t, sizeof mask_bytes);
  const vi m = __builtin_convertvector(mask_bytes, vi) != 0;
  const vi counted = m | (splat<vf>(s.padding) != vf{});  // carries loss and gradient
  const vf logp = load(r.logp + t), a = load(r.adv + t), ref = load(r.ref + t), h = load(r.entropy + t);
  const vf d = logp - load(r.old + t), w = load(r.w + t);
  const vf read = (logp - logp) + (a - a) + (d - d) + (ref - ref), check = read + (h - h);
  const vi pass = (w <= splat<vf>(s.clamp)) & (w >= splat<vf>(-s.clamp));
  const vf ratio = exp_any(clamp_to(w, splat<vf>(-s.clamp), splat<vf>(s.clamp)));
  const vi capped = ratio > splat<vf>(s.delta);
  const vf rd = select(capped, splat<vf>(s.delta), ratio);
  const vf unclipped = -rd * a, clipped = -clamp_to(ratio, splat<vf>(s.lo), splat<vf>(s.hi)) * a, bound = -a * s.dual_c;
  const vi take_clipped = clipped > unclipped;
  const vi inside = (ratio >= splat<vf>(s.lo)) & (ratio <= splat<vf>(s.hi));
  const vf surrogate = select(take_clipped, clipped, unclipped);
  const vf d_surrogate = select(take_clipped, select(inside, -a), select(~capped, -a));
  const vi dual = (a < vf{}) & (surrogate > bound);
  const vi keep = m ? (h >= splat<vf>(s.threshold)) : (splat<vf>(s.keep_padding) != vf{});
  const vf value = select(keep, select(dual, bound, surrogate));
  const vf d_ratio = select(keep & ~dual, d_surrogate);
  vf kl_d;
  const vf kl = kl_value(logp - ref, s, kl_d);
  const vf bias = s.bias * ratio + (1.0f - s.bias);
  const vf total_d_ratio = d_ratio + s.bias * s.beta * kl;
  const vf direct = select(counted, s.weight * s.beta * kl_d * bias);
  const vf routed = select(counted & pass, s.weight * total_d_ratio * ratio);
  std::memcpy(r.grad + t, &direct, sizeof direct);
  std::memcpy(r.routed + t, &routed, sizeof routed);
  const vi low = (rd < splat<vf>(s.lo)) & (a < vf{}), high = (rd > splat<vf>(s.hi)) & (a > vf{});
  acc.loss += select(counted, value + s.beta * kl * bias);
  acc.policy += select(counted, value);
  acc.kl += select(m, kl * bias);
  acc.low += select(m & low, splat<vf>(1.0f));
  acc.high += select(m & high, splat<vf>(1.0f));
  acc.dual += select(m & dual, splat<vf>(1.0f));
  acc.ratio += select(m, ratio);
  acc.ratio_min = select(m & (ratio < acc.ratio_min), ratio, acc.ratio_min);
  acc.ratio_max = select(m & (ratio > acc.ratio_max), ratio, acc.ratio_max);
  acc.entropy += select(m, h);
  acc.ppo_kl -= select(m, clamp_to(d, splat<vf>(-s.ppo_clamp), splat<vf>(s.ppo_clamp)));
  acc.bad += select((m & (check != check)) | (counted & (read != read)), splat<vf>(1.0f));
}

// The last cols % kLanes tokens, through a zero-padded copy with mask 0 beyond the row.
GRPO_INLINE void tail(const Row& r, const Scalars& s, int64_t t, Sums& acc) {
  const int64_t n = r.cols - t;
  alignas(32) float logp[kLanes] = {}, old[kLanes] = {}, ref[kLanes] = {}, adv[kLanes] = {}, h[kLanes] = {};
  alignas(32) float w[kLanes] = {}, g[kLanes], routed[kLanes];
  alignas(16) uint8_t mask[kLanes] = {};
  for (int64_t i = 0; i < n; ++i) {
    logp[i] = r.logp[t + i], old[i] = r.old[t + i], ref[i] = r.ref[t + i], adv[i] = r.adv[t + i];
    h[i] = r.entropy[t + i], w[i] = r.w[t + i], mask[i] = r.mask[t + i];
  }
  block(Row{logp, old, ref, adv, h, w, mask, g, routed, kLanes}, s, 0, acc);
  for (int64_t i = 0; i < n; ++i) r.grad[t + i] = g[i], r.routed[t + i] = routed[i];
}

// Row and Scalars arrive by value: nothing the loop stores can alias them.
GRPO_CLONES void row_lanes(const Row r, const Scalars s, Lanes& out) {
  Sums acc{};
  acc.ratio_min = splat<vf>(kInf), acc.ratio_max = splat<vf>(-kInf);
  int64_t t = 0;
  for (; t + kLanes <= r.cols; t += kLanes) block(r, s, t, acc);
  if (t < r.cols) tail(r, s, t, acc);
  const vf* sums[] = {&acc.loss, &acc.policy, &acc.kl, &acc.low, &acc.high, &acc.dual, &acc.ratio,
                      &acc.ratio_min, &acc.ratio_max, &acc.entropy, &acc.ppo_kl, &acc.bad};
  float* outs[] = {out.loss, out.policy, out.kl, out.low, out.high, out.dual, out.ratio,
                   out.ratio_min, out.ratio_max, out.entropy, out.ppo_kl, out.bad};
  for (int k = 0; k < 12; ++k) std::memcpy(outs[k], sums[k], sizeof(vf));
}

GRPO_CLONES int64_t mask_count(const uint8_t* mask, int64_t cols) {
  int64_t n = 0;
  for (int64_t t = 0; t < cols; ++t) n += mask[t] != 0;
  return n;
}

GRPO_CLONES void subtract(const float* x, const float* y, int64_t n, float* out) {
  for (int64_t t = 0; t < n; ++t) out[t] = x[t] - y[t];
}

GRPO_CLONES void add_into(const float* x, int64_t n, float* out) {
  for (int64_t t = 0; t < n; ++t) out[t] += x[t];
}

// Log-weights of a row: token log-ratios, or the bin means of the sequence / item levels.
// Returns the row's masked-token count; -1 when pass 1 found a bad input.
double log_weights(const LossProblem& p, int64_t row, const Row& r, FastScratch& scratch, float* w, LossPartial& partial) {
  if (p.options.is_level == GRPO_IS_TOKEN) {
    subtract(r.logp, r.old, r.cols, w);
    return static_cast<double>(mask_count(r.mask, r.cols));
  }
  const RowSums sums = bin_log_ratios(p, row, scratch.bins, partial);
  if (partial.bad_index >= 0) return -1.0;
  const bool padding = loss::counts_padding(p);  // never at the item level: padding reads bin 0
  for (int64_t t = 0; t < r.cols; ++t)
    w[t] = r.mask[t] || padding ? static_cast<float>(scratch.bins.log_ratio[bin_of(p, row * r.cols + t)]) : 0.0f;
  return sums.tokens;
}

// Adds the gradient through the ratio: to the token itself (token, sequence-token levels), or
// summed over the bin and shared by its tokens, d(bin mean)/d(logp_t) = 1 / tokens in the bin.
void route(const LossProblem& p, int64_t row, const Row& r, RowScratch& bins) {
  if (p.options.is_level == GRPO_IS_TOKEN || p.options.is_level == GRPO_IS_SEQUENCE_TOKEN) {
    add_into(r.routed, r.cols, r.grad);
    return;
  }
  const int64_t base = row * r.cols;
  const bool padding = loss::counts_padding(p);
  for (int64_t t = 0; t < r.cols; ++t)
    if (r.mask[t] || padding) bins.grad[bin_of(p, base + t)] += r.routed[t];
  for (int64_t t = 0; t < r.cols; ++t) {
    const int64_t bin = bin_of(p, base + t);
    if (r.mask[t]) r.grad[t] += static_cast<float>(bins.grad[bin] / std::max(bins.count[bin], 1.0));
  }
}

double lane_sum(const float* x) {
  double sum = 0.0;
  for (int j = 0; j < kLanes; ++j) sum += x[j];
  return sum;
}

Scalars scalars(const LossProblem& p, double weight) {
  const grpo_surrogate& s = p.options.surrogate;
  const grpo_kl_options& kl = p.options.kl;
  const auto limit = [](double x) { return x > 0.0 ? static_cast<float>(x) : kInf; };
  const auto is = [&](int32_t estimator) { return kl.estimator == estimator ? 1.0f : 0.0f; };
  return {static_cast<float>(weight), static_cast<float>(1.0 - s.epsilon_low), static_cast<float>(1.0 + s.epsilon_high),
          limit(s.delta), limit(s.dual_clip_c), limit(s.log_ratio_clamp), static_cast<float>(kl.beta), p.keep_threshold,
          kl.bias_correction ? 1.0f : 0.0f, is(GRPO_KL_K1), is(GRPO_KL_ABS), is(GRPO_KL_K2), is(GRPO_KL_K3),
          kl.k2_gradient ? 1.0f : 0.0f, kl.clamp == GRPO_KL_CLAMP_VERL ? 20.0f : kInf,
          kl.clamp == GRPO_KL_CLAMP_OPENRLHF || (kl.clamp == GRPO_KL_CLAMP_VERL && kl.estimator == GRPO_KL_K3) ? 10.0f : kInf,
          p.options.is_level == GRPO_IS_TOKEN ? limit(s.log_ratio_clamp) : kInf, loss::counts_padding(p) ? 1.0f : 0.0f,
          loss::keeps_padding_policy(p) ? 1.0f : 0.0f};
}

// Flags the first token with a non-finite input it reads (padding reads no entropy).
void flag_bad(const Row& r, int64_t base, bool padding, LossPartial& partial) {
  for (int64_t t = 0; t < r.cols && partial.bad_index < 0; ++t) {
    const bool read = std::isfinite(r.logp[t]) && std::isfinite(r.adv[t]) && std::isfinite(r.old[t]) && std::isfinite(r.ref[t]);
    const bool bad = r.mask[t] ? !(read && std::isfinite(r.entropy[t])) : padding && !read;
    if (bad) partial.bad_index = base + t, partial.bad_what = kBadValue;
  }
}

}  // namespace

void fast_loss_row(const LossProblem& p, int64_t row, FastScratch& scratch, float* grad_logp, LossPartial& partial) {
  const int64_t cols = p.cols, base = row * cols;
  float* w = scratch.floats.data();
  float* routed = w + cols;
  const float* logp = p.logp + base;
  const float* adv = p.advantages + base;
  if (!p.advantages_per_token) std::fill(routed + cols, routed + 2 * cols, p.advantages[row]), adv = routed + cols;
  // Absent inputs read a stand-in: old = logp (ratio 1), ref = logp (KL 0), entropy = logp (threshold -inf).
  const Row r{logp, p.old_logp ? p.old_logp + base : logp, p.ref_logp ? p.ref_logp + base : logp, adv,
              p.entropy ? p.entropy + base : logp, w, p.mask + base, grad_logp + base, routed, cols};
  const double tokens = log_weights(p, row, r, scratch, w, partial);
  if (tokens < 0.0) return;
  const double weight = row_weight(p, tokens);
  Lanes acc;
  row_lanes(r, scalars(p, weight), acc);
  if (lane_sum(acc.bad) > 0.0) return flag_bad(r, base, loss::counts_padding(p), partial);
  route(p, row, r, scratch.bins);
  partial.loss += weight * lane_sum(acc.loss), partial.policy += weight * lane_sum(acc.policy);
  partial.kl += lane_sum(acc.kl), partial.low += lane_sum(acc.low), partial.high += lane_sum(acc.high);
  partial.dual += lane_sum(acc.dual), partial.ratio += lane_sum(acc.ratio), partial.ppo_kl += lane_sum(acc.ppo_kl);
  if (p.entropy) partial.entropy += lane_sum(acc.entropy);
  partial.region += lane_sum(acc.low) + lane_sum(acc.high), partial.tokens += tokens;
  partial.row_low += lane_sum(acc.low) > 0.0, partial.row_high += lane_sum(acc.high) > 0.0;
  partial.row_region += lane_sum(acc.low) + lane_sum(acc.high) > 0.0;
  for (int j = 0; j < kLanes; ++j) {
    partial.ratio_min = std::min<double>(partial.ratio_min, acc.ratio_min[j]);
    partial.ratio_max = std::max<double>(partial.ratio_max, acc.ratio_max[j]);
  }
}

}  // namespace grpo
