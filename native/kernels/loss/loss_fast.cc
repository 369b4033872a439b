// The vectorised row of the clip surrogate (TRL grpo/bnpo/dapo/dr_grpo/luspo, verl vanilla/gspo,
// Rank-GRPO) at every importance-sampling level, with any KL estimator and clamp and entropy
// masking. One pass over the row, branch-free on GCC vectors (loss_lanes.h): kLanes floats in the
// clones (GRPO_CLONES), kWideLanes floats where cpuPath() is avx512 (loss_fast_avx512.cc), the same
// bits either way. At the token levels the row writes the whole gradient in the same sweep.
// Masked-out tokens are selected away, never multiplied by 0, so non-finite padding cannot
// leak into the sums.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "loss.h"
#include "loss_lanes.h"
#include "loss_token.h"
#include "runtime/simd.h"

namespace grpo {

namespace {

using loss::bin_of;
using loss::row_weight;
using loss_lanes::kInf;
using loss_lanes::kLanes;
using loss_lanes::Lanes;
using loss_lanes::Level;
using loss_lanes::Row;
using loss_lanes::Scalars;
using loss_lanes::Sums;

// The options kTokenPlain leaves out: the k3 estimator alone, no entropy, no delta cap, no dual clip.
bool plain_options(const LossProblem& p) {
  const grpo_surrogate& s = p.options.surrogate;
  const grpo_kl_options& kl = p.options.kl;
  return kl.estimator == GRPO_KL_K3 && !kl.k2_gradient && !p.entropy && p.keep_threshold == -kInf && !(s.delta > 0.0) &&
         !(s.dual_clip_c > 0.0);
}

Level level_of(const LossProblem& p) {
  if (p.options.is_level == GRPO_IS_TOKEN) return plain_options(p) ? Level::kTokenPlain : Level::kToken;
  return p.options.is_level == GRPO_IS_SEQUENCE_TOKEN ? Level::kSequenceToken : Level::kBins;
}

// Row and Scalars arrive by value: nothing the loop stores can alias them.
GRPO_CLONES void row_lanes(const Row r, const Scalars s, Level level, Lanes& out) {
  using loss_lanes::narrow_row;
  Sums acc = loss_lanes::empty_sums();
  if (level == Level::kTokenPlain) narrow_row<Level::kTokenPlain>(r, s, 0, acc);
  else if (level == Level::kToken) narrow_row<Level::kToken>(r, s, 0, acc);
  else if (level == Level::kSequenceToken) narrow_row<Level::kSequenceToken>(r, s, 0, acc);
  else narrow_row<Level::kBins>(r, s, 0, acc);
  loss_lanes::write_lanes(acc, out);
}

void row_terms(const Row& r, const Scalars& s, Level level, Lanes& out) {
#if GRPO_HAS_AVX512_CODE
  if (simd::avx512_path()) return loss_lanes::row_lanes_avx512(r, s, level, out);
#endif
  row_lanes(r, s, level, out);
}

// Log-weights of a row: the bin means of the sequence / item levels (the token level's own log-ratios
// come with the row's block). Returns the row's masked-token count; -1 when pass 1 found a bad input.
double log_weights(const LossProblem& p, int64_t row, const Row& r, FastScratch& scratch, float* w, LossPartial& partial) {
  if (p.options.is_level == GRPO_IS_TOKEN) return static_cast<double>(mask_count(r.mask, r.cols));
  const RowSums sums = bin_log_ratios(p, row, scratch.bins, partial);
  if (partial.bad_index >= 0) return -1.0;
  const bool padding = loss::counts_padding(p);  // never at the item level: padding reads bin 0
  for (int64_t t = 0; t < r.cols; ++t)
    w[t] = r.mask[t] || padding ? static_cast<float>(scratch.bins.log_ratio[bin_of(p, row * r.cols + t)]) : 0.0f;
  return sums.tokens;
}

// Adds the gradient through the ratio at the sequence / item levels (the block added it to the token
// itself at the others): summed over the bin and shared by its tokens, d(bin mean)/d(logp_t) = 1 / tokens in the bin.
void route(const LossProblem& p, int64_t row, const Row& r, RowScratch& bins) {
  if (level_of(p) != Level::kBins) return;
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

// int32 counts per chunk: an int64 count widens each mask byte to a 64-bit lane (a quarter of the lanes).
constexpr int64_t kCountChunk = 1 << 16;

GRPO_CLONES int64_t mask_count(const uint8_t* mask, int64_t n) {
  int64_t count = 0;
  for (int64_t begin = 0; begin < n; begin += kCountChunk) {
    const int64_t end = std::min(n, begin + kCountChunk);
    int32_t chunk = 0;
    for (int64_t t = begin; t < end; ++t) chunk += mask[t] != 0;
    count += chunk;
  }
  return count;
}

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
  row_terms(r, scalars(p, weight), level_of(p), acc);
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
