// Per-token terms of the policy loss: the surrogate ℓ(r, A) with its derivatives, and the KL
// estimators. Header-only so the row loops of loss.cc inline them.
#pragma once

#include <cmath>

#include "grpo/loss.h"
#include "simd.h"

// Vector values only pass between inlined helpers: no ABI boundary is involved.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace grpo::loss {

// e^x for any float x, vectorisable: e^-|x| from the shared kernel, inverted for x > 0.
// The vector type of the vectorised row (loss_fast.cc): eight floats, one ymm or two xmm. The inline
// helpers are lowered for the baseline target before they are inlined into the clones: 32-byte
// vectors survive that as pairs of SSE operations, 64-byte ones were scalarised (measured).
constexpr int kVectorLanes = 8;
typedef float vf __attribute__((vector_size(4 * kVectorLanes)));
typedef int32_t vi __attribute__((vector_size(4 * kVectorLanes)));

template <typename F> GRPO_INLINE F splat(float x) { return F{} + x; }
GRPO_INLINE float pick(bool c, float x, float y) { return c ? x : y; }
GRPO_INLINE vf pick(const vi& c, const vf& x, const vf& y) { return c ? x : y; }
using simd::pow2;
GRPO_INLINE vf pow2(const vf& n) {
  const vi bits = (__builtin_convertvector(n, vi) + 127) << 23;
  return reinterpret_cast<vf>(bits);
}
template <typename F> GRPO_INLINE F clamp_to(const F& x, const F& lo, const F& hi) { return pick(x < lo, lo, pick(x > hi, hi, x)); }

// e^x for any x (float or vf), branch-free so that the loops calling it vectorise: the range
// reduction and polynomial of simd::exp_nonpositive (about 2 ulp), with x clamped to [-87, 87]
// (e^x saturates at 1.6e-38 and 6.1e37 instead of reaching 0 / +Infinity).
template <typename F> GRPO_INLINE F exp_any(const F& x) {
  F n;
  const F p = simd::exp_polynomial(clamp_to(x, splat<F>(-87.0f), splat<F>(87.0f)), &n);
  return p * pow2(n);
}

// One token's policy term: value, d/d(ratio) (routed through the IS level), d/d(logp) directly
// (CISPO / GPG / VESPO use sg(weight)·A·logp), and its clip flags.
struct Term {
  float value, d_ratio, d_logp;
  bool low, high, dual;
};

// TRL grpo (+delta) and verl vanilla (+dual clip): max(-r'·A, -clamp(r, 1-εl, 1+εh)·A).
GRPO_INLINE Term clip_term(float r, float a, const grpo_surrogate& s) {
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

GRPO_INLINE Term cispo_cap_term(float r, float a, float logp, const grpo_surrogate& s) {
  const float cap = static_cast<float>(s.cispo_cap);
  const float w = r < cap ? r : cap;
  return {-w * a * logp, 0.0f, -w * a, false, r > cap && a > 0.0f, false};
}

GRPO_INLINE Term cispo_clamp_term(float r, float a, float logp, const grpo_surrogate& s) {
  const float lo = static_cast<float>(1.0 - s.epsilon_low), hi = static_cast<float>(1.0 + s.epsilon_high);
  const float w = r < lo ? lo : (r > hi ? hi : r);
  return {-w * a * logp, 0.0f, -w * a, r < lo, r > hi, false};
}

GRPO_INLINE Term sapo_term(float r, float a, const grpo_surrogate& s) {
  const float tau = static_cast<float>(a > 0.0f ? s.sapo_tau_pos : s.sapo_tau_neg);
  const float sigma = 1.0f / (1.0f + exp_any(-tau * (r - 1.0f)));
  return {-sigma * 4.0f / tau * a, -4.0f * a * sigma * (1.0f - sigma), 0.0f, false, false, false};
}

// phi: the VESPO sequence weight for this token's advantage sign (no gradient).
GRPO_INLINE Term surrogate(float r, float a, float logp, float phi, const grpo_surrogate& s) {
  switch (s.type) {
    case GRPO_LOSS_CLIP: return clip_term(r, a, s);
    case GRPO_LOSS_CISPO_CAP: return cispo_cap_term(r, a, logp, s);
    case GRPO_LOSS_CISPO_CLAMP: return cispo_clamp_term(r, a, logp, s);
    case GRPO_LOSS_SAPO: return sapo_term(r, a, s);
    case GRPO_LOSS_VESPO: return {-phi * a * logp, 0.0f, -phi * a, false, false, false};
    case GRPO_LOSS_GPG: return {-a * logp, 0.0f, -a, false, false, false};
    default: return {0.0f, 0.0f, 0.0f, false, false, false};  // GEO_MEAN: a row-level term
  }
}

// VESPO φ = exp(λ + k·log w − λ·w), log w = clamp(s, ln 1e-8, 20), s = Σ m·clamp(log r, ±20); NaN/inf → 0.
inline float vespo_phi(double log_ratio_sum, double k, double lambda) {
  const double log_w = std::fmin(std::fmax(log_ratio_sum, std::log(1e-8)), 20.0);
  const double phi = std::exp(lambda + k * log_w - lambda * std::exp(log_w));
  return std::isfinite(phi) ? static_cast<float>(phi) : 0.0f;
}

struct Kl {
  float value, d_logp;
};

GRPO_INLINE Kl kl_term(float logp, float ref, const grpo_kl_options& o) {
  const float lr = logp - ref;
  Kl k{lr, 1.0f};
  if (o.estimator == GRPO_KL_ABS) k = {std::fabs(lr), lr > 0.0f ? 1.0f : (lr < 0.0f ? -1.0f : 0.0f)};
  if (o.estimator == GRPO_KL_K2) k = {0.5f * lr * lr, lr};
  if (o.estimator == GRPO_KL_K3) {
    float x = -lr, pass = 1.0f;
    if (o.clamp == GRPO_KL_CLAMP_VERL && std::fabs(x) > 20.0f) x = x > 0.0f ? 20.0f : -20.0f, pass = 0.0f;
    const float e = exp_any(x);
    k = {e - x - 1.0f, (1.0f - e) * pass};
  }
  const bool clamps_value = o.clamp == GRPO_KL_CLAMP_OPENRLHF || (o.clamp == GRPO_KL_CLAMP_VERL && o.estimator == GRPO_KL_K3);
  if (clamps_value && std::fabs(k.value) > 10.0f) k = {k.value > 0.0f ? 10.0f : -10.0f, 0.0f};
  return k;
}

}  // namespace grpo::loss
