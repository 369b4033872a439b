// The block of the vectorised clip row (loss_fast.cc): its arrays, its options as numbers, and the
// per-vector terms with their lane sums, written once over a vector type V and compiled twice: into
// the GRPO_CLONES row of loss_fast.cc (V of kLanes floats) and, under x86-64-v4 as a whole, into the
// AVX-512 row of loss_fast_avx512.cc (V of kWideLanes floats as well). Lane masks get their type
// where a function is compiled (AVX-512 mask registers only under that target: compiled for the
// baseline and inlined later, GCC 12 expands every 16-lane comparison element by element), hence a
// header included under each target rather than shared inline code. Every function here is
// GRPO_INLINE, compiled into its callers only, so the two builds never meet at link time.
// Either way token t is summed into lane t % kLanes in token order: both rows give the same bits.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "loss_terms.h"
#include "runtime/simd.h"

namespace grpo::loss_lanes {

using loss::clamp_to;
using loss::exp_any;
using loss::splat;
using loss::vf;
using loss::vfw;
constexpr int kLanes = loss::kVectorLanes;

// Per-lane sums of one row; combined lane by lane in a fixed order.
struct Lanes {
  float loss[kLanes], policy[kLanes], kl[kLanes], low[kLanes], high[kLanes], dual[kLanes], ratio[kLanes];
  float ratio_min[kLanes], ratio_max[kLanes], entropy[kLanes], ppo_kl[kLanes], bad[kLanes];
};

// One row's arrays. w: the log-weight of each token's ratio at the sequence / item levels (its
// sequence's or item's mean; the token level's is logp − old). grad receives d(loss)/d(logp); at the
// sequence / item levels its direct part, routed the part through the ratio.
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

// How a row's gradient through the ratio is routed: at the token levels it is added to the token's own
// gradient in the block (the token level also computes its log-weight there, logp − old); at the
// sequence / item levels it is stored in Row::routed and summed per bin afterwards (route).
// kTokenPlain: the token level with the common options (the k3 KL estimator without the k2 gradient, no entropy
// input, no delta cap, no dual clip), whose block leaves out the terms those options would add; the same bits as
// kToken on the same inputs (test_loss_lanes checks it).
enum class Level { kToken, kTokenPlain, kSequenceToken, kBins };

// Whether a row at level L computes its own log-weights (logp − old) in the block.
constexpr bool token_level(Level level) { return level == Level::kToken || level == Level::kTokenPlain; }

template <typename V> using IntOf = decltype(V{} < V{});  // the lane masks of float vector V

template <typename V> GRPO_INLINE V load(const float* x) {
  V v;
  std::memcpy(&v, x, sizeof v);
  return v;
}

template <typename V> GRPO_INLINE void store(float* x, const V& v) { std::memcpy(x, &v, sizeof v); }

// The mask bytes of one vector of tokens as lane masks.
template <typename V> GRPO_INLINE IntOf<V> mask_at(const uint8_t* mask) {
  typedef uint8_t Bytes __attribute__((vector_size(sizeof(V) / sizeof(float))));
  Bytes bytes;
  std::memcpy(&bytes, mask, sizeof bytes);
  return __builtin_convertvector(bytes, IntOf<V>) != 0;
}

template <typename I, typename V> GRPO_INLINE V select(const I& c, const V& x, const V& y) { return c ? x : y; }
template <typename I, typename V> GRPO_INLINE V select(const I& c, const V& x) { return select(c, x, V{}); }

// KL value and its derivative in logp (as loss::kl_term), every estimator computed and weighted.
template <typename V> GRPO_INLINE V kl_value(const V& lr, const Scalars& s, V& d_logp) {
  const V x = clamp_to(-lr, splat<V>(-s.k3_x_limit), splat<V>(s.k3_x_limit));
  const V e = exp_any(x);
  const V k3_pass = select((-lr <= splat<V>(s.k3_x_limit)) & (-lr >= splat<V>(-s.k3_x_limit)), splat<V>(1.0f));
  const V sign = select(lr > V{}, splat<V>(1.0f), select(lr < V{}, splat<V>(-1.0f)));
  const V value = s.k1 * lr + s.abs * sign * lr + s.k2 * 0.5f * lr * lr + s.k3 * (e - x - 1.0f);
  const V d = s.k1 + s.abs * sign + s.k2 * lr + s.k3 * (1.0f - e) * k3_pass;
  const IntOf<V> out = (value > splat<V>(s.kl_value_limit)) | (value < splat<V>(-s.kl_value_limit));
  d_logp = s.k2_gradient != 0.0f ? lr : select(out, V{}, d);
  return select(out, select(value > V{}, splat<V>(s.kl_value_limit), splat<V>(-s.kl_value_limit)), value);
}

// The k3 estimator alone (kl_value with k3 = 1, the other weights 0 and no k2 gradient).
template <typename V> GRPO_INLINE V kl_value_k3(const V& lr, const Scalars& s, V& d_logp) {
  const V x = clamp_to(-lr, splat<V>(-s.k3_x_limit), splat<V>(s.k3_x_limit));
  const V e = exp_any(x);
  const V k3_pass = select((-lr <= splat<V>(s.k3_x_limit)) & (-lr >= splat<V>(-s.k3_x_limit)), splat<V>(1.0f));
  const V value = e - x - 1.0f, d = (1.0f - e) * k3_pass;
  const IntOf<V> out = (value > splat<V>(s.kl_value_limit)) | (value < splat<V>(-s.kl_value_limit));
  d_logp = select(out, V{}, d);
  return select(out, select(value > V{}, splat<V>(s.kl_value_limit), splat<V>(-s.kl_value_limit)), value);
}

struct Sums {
  vf loss, policy, kl, low, high, dual, ratio, ratio_min, ratio_max, entropy, ppo_kl, bad;
};

// What one vector of tokens adds to the Sums (ratio_low / ratio_high: the ratio where masked in, else
// +Infinity / -Infinity, which the minimum / maximum skip).
template <typename V> struct Terms {
  V loss, policy, kl, low, high, dual, ratio, ratio_low, ratio_high, entropy, ppo_kl, bad;
};

// Piece h of kLanes floats of a vector (a kLanes vector is its own piece 0).
GRPO_INLINE vf piece(const vf& v, int) { return v; }
GRPO_INLINE vf piece(const vfw& v, int h) {
  vf p;
  std::memcpy(&p, reinterpret_cast<const float*>(&v) + h * kLanes, sizeof p);
  return p;
}

// Token t lands in lane t % kLanes in token order: a wide vector's pieces go in low first.
template <typename V> GRPO_INLINE void accumulate(const Terms<V>& t, Sums& acc) {
  for (int h = 0; h < static_cast<int>(sizeof(V) / sizeof(vf)); ++h) {
    acc.loss += piece(t.loss, h), acc.policy += piece(t.policy, h), acc.kl += piece(t.kl, h);
    acc.low += piece(t.low, h), acc.high += piece(t.high, h), acc.dual += piece(t.dual, h);
    acc.ratio += piece(t.ratio, h), acc.entropy += piece(t.entropy, h), acc.ppo_kl -= piece(t.ppo_kl, h);
    acc.bad += piece(t.bad, h);
    const vf low = piece(t.ratio_low, h), high = piece(t.ratio_high, h);
    acc.ratio_min = select(low < acc.ratio_min, low, acc.ratio_min);
    acc.ratio_max = select(high > acc.ratio_max, high, acc.ratio_max);
  }
}

// One vector of tokens: the clip surrogate of loss::clip_term and the KL term, with their gradient.
// Under kTokenPlain the entropy row is the logp stand-in (its check adds nothing to read's), the threshold
// −Infinity (every masked-in token kept), delta and the dual clip infinite (never capped, never dual).
template <Level kLevel, typename V> GRPO_INLINE void block(const Row& r, const Scalars& s, int64_t t, Sums& acc) {
  using I = IntOf<V>;
  constexpr bool kPlain = kLevel == Level::kTokenPlain;
  const I m = mask_at<V>(r.mask + t);
  const I counted = m | (splat<V>(s.padding) != V{});  // carries loss and gradient
  const V logp = load<V>(r.logp + t), a = load<V>(r.adv + t), ref = load<V>(r.ref + t);
  const V h = kPlain ? logp : load<V>(r.entropy + t);  // plain: the stand-in row is logp itself
  const V d = logp - load<V>(r.old + t), w = token_level(kLevel) ? d : load<V>(r.w + t);
  const V read = (logp - logp) + (a - a) + (d - d) + (ref - ref), check = kPlain ? read : read + (h - h);
  const I pass = (w <= splat<V>(s.clamp)) & (w >= splat<V>(-s.clamp));
  const V ratio = exp_any(clamp_to(w, splat<V>(-s.clamp), splat<V>(s.clamp)));
  const I capped = kPlain ? I{} : ratio > splat<V>(s.delta);
  const V rd = kPlain ? ratio : select(capped, splat<V>(s.delta), ratio);
  const V unclipped = -rd * a, clipped = -clamp_to(ratio, splat<V>(s.lo), splat<V>(s.hi)) * a, bound = -a * s.dual_c;
  const I take_clipped = clipped > unclipped;
  const I inside = (ratio >= splat<V>(s.lo)) & (ratio <= splat<V>(s.hi));
  const V surrogate = select(take_clipped, clipped, unclipped);
  const V d_surrogate = select(take_clipped, select(inside, -a), kPlain ? -a : select(~capped, -a));
  const I dual = kPlain ? I{} : (a < V{}) & (surrogate > bound);
  const I keep_padding = splat<V>(s.keep_padding) != V{};
  const I keep = kPlain ? m | keep_padding : (m ? (h >= splat<V>(s.threshold)) : keep_padding);
  const V value = kPlain ? select(keep, surrogate) : select(keep, select(dual, bound, surrogate));
  const V d_ratio = kPlain ? select(keep, d_surrogate) : select(keep & ~dual, d_surrogate);
  V kl_d;
  const V kl = kPlain ? kl_value_k3(logp - ref, s, kl_d) : kl_value(logp - ref, s, kl_d);
  const V bias = s.bias * ratio + (1.0f - s.bias);
  const V total_d_ratio = d_ratio + s.bias * s.beta * kl;
  const V direct = select(counted, s.weight * s.beta * kl_d * bias);
  const V routed = select(counted & pass, s.weight * total_d_ratio * ratio);
  if constexpr (kLevel == Level::kBins) {
    store(r.grad + t, direct);
    store(r.routed + t, routed);
  } else {
    store(r.grad + t, direct + routed);
  }
  const I low = (rd < splat<V>(s.lo)) & (a < V{}), high = (rd > splat<V>(s.hi)) & (a > V{});
  const V one = splat<V>(1.0f);
  accumulate(Terms<V>{select(counted, value + s.beta * kl * bias), select(counted, value), select(m, kl * bias),
                      select(m & low, one), select(m & high, one), select(m & dual, one), select(m, ratio),
                      select(m, ratio, splat<V>(kInf)), select(m, ratio, splat<V>(-kInf)), select(m, h),
                      select(m, clamp_to(d, splat<V>(-s.ppo_clamp), splat<V>(s.ppo_clamp))),
                      select((m & (check != check)) | (counted & (read != read)), one)},
             acc);
}

// The last cols % kLanes tokens, through a zero-padded copy with mask 0 beyond the row.
template <Level kLevel> GRPO_INLINE void tail(const Row& r, const Scalars& s, int64_t t, Sums& acc) {
  const int64_t n = r.cols - t;
  alignas(32) float logp[kLanes] = {}, old[kLanes] = {}, ref[kLanes] = {}, adv[kLanes] = {}, h[kLanes] = {};
  alignas(32) float w[kLanes] = {}, g[kLanes], routed[kLanes];
  alignas(16) uint8_t mask[kLanes] = {};
  for (int64_t i = 0; i < n; ++i) {
    logp[i] = r.logp[t + i], old[i] = r.old[t + i], ref[i] = r.ref[t + i], adv[i] = r.adv[t + i];
    h[i] = r.entropy[t + i], mask[i] = r.mask[t + i];
    if (!token_level(kLevel)) w[i] = r.w[t + i];
  }
  block<kLevel, vf>(Row{logp, old, ref, adv, h, w, mask, g, routed, kLanes}, s, 0, acc);
  for (int64_t i = 0; i < n; ++i) r.grad[t + i] = g[i];
  if (kLevel == Level::kBins)
    for (int64_t i = 0; i < n; ++i) r.routed[t + i] = routed[i];
}

GRPO_INLINE Sums empty_sums() {
  Sums acc{};
  acc.ratio_min = splat<vf>(kInf), acc.ratio_max = splat<vf>(-kInf);
  return acc;
}

GRPO_INLINE void write_lanes(const Sums& acc, Lanes& out) {
  const vf* sums[] = {&acc.loss, &acc.policy, &acc.kl, &acc.low, &acc.high, &acc.dual, &acc.ratio,
                      &acc.ratio_min, &acc.ratio_max, &acc.entropy, &acc.ppo_kl, &acc.bad};
  float* outs[] = {out.loss, out.policy, out.kl, out.low, out.high, out.dual, out.ratio,
                   out.ratio_min, out.ratio_max, out.entropy, out.ppo_kl, out.bad};
  for (int k = 0; k < 12; ++k) std::memcpy(outs[k], sums[k], sizeof(vf));
}

// The row from token t on, kLanes at a time.
template <Level kLevel> GRPO_INLINE void narrow_row(const Row& r, const Scalars& s, int64_t t, Sums& acc) {
  for (; t + kLanes <= r.cols; t += kLanes) block<kLevel, vf>(r, s, t, acc);
  if (t < r.cols) tail<kLevel>(r, s, t, acc);
}

template <Level kLevel> GRPO_INLINE void wide_row(const Row& r, const Scalars& s, Sums& acc) {
  int64_t t = 0;
  for (; t + loss::kWideLanes <= r.cols; t += loss::kWideLanes) block<kLevel, vfw>(r, s, t, acc);
  narrow_row<kLevel>(r, s, t, acc);
}

// The AVX-512 row (loss_fast_avx512.cc): row_lanes on zmm registers, the same terms and lane sums.
#if GRPO_HAS_AVX512_CODE
void row_lanes_avx512(const Row r, const Scalars s, Level level, Lanes& out);
#endif

}  // namespace grpo::loss_lanes
