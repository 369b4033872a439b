// The policy loss over [rows, cols] tokens: forward and analytic backward in one pass per row.
// A row is read once for its importance-sampling log-weights (sequence / item levels), once for
// the per-token terms, and, for sequence / item levels, once more to route d(loss)/d(log-weight)
// back to its tokens. Reductions: one partial per fixed block of rows, combined in block order.
#include "loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "error.h"
#include "loss_terms.h"
#include "thread_pool.h"

namespace grpo {

namespace {

constexpr int64_t kTokensPerTask = 1 << 14;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void add(LossPartial& into, const LossPartial& p) {
  into.loss += p.loss, into.policy += p.policy, into.kl += p.kl, into.low += p.low, into.high += p.high;
  into.region += p.region, into.dual += p.dual, into.ratio += p.ratio, into.entropy += p.entropy;
  into.ppo_kl += p.ppo_kl, into.tokens += p.tokens;
  into.ratio_min = std::min(into.ratio_min, p.ratio_min), into.ratio_max = std::max(into.ratio_max, p.ratio_max);
  if (p.bad_index >= 0 && into.bad_index < 0) into.bad_index = p.bad_index, into.bad_what = p.bad_what;
}

}  // namespace

double row_weight(const LossProblem& p, double n) {
  const grpo_aggregate_options& a = p.options.aggregate;
  const double ga = a.accumulation_steps;
  switch (a.mode) {
    case GRPO_AGG_GLOBAL_TOKEN_MEAN: return 1.0 / p.token_count;
    case GRPO_AGG_LOCAL_TOKEN_MEAN: return 1.0 / std::max(p.total_tokens, 1.0) / ga;
    case GRPO_AGG_SEQ_MEAN_TOKEN_MEAN: return 1.0 / (std::max(n, 1.0) * p.sequence_count * ga);
    case GRPO_AGG_SEQ_MEAN_TOKEN_SUM: return 1.0 / (p.sequence_count * ga);
    case GRPO_AGG_TOKEN_SUM_OVER_BL: return 1.0 / (p.sequence_count * a.max_completion_length * ga);
    default: return 1.0 / (p.loss_scale_factor * ga);
  }
}

namespace {

int64_t rows_per_task(int64_t cols) { return std::max<int64_t>(1, kTokensPerTask / std::max<int64_t>(cols, 1)); }

double mask_total(const LossProblem& p) {
  const int64_t grain = rows_per_task(p.cols);
  std::vector<int64_t> partial(block_count(p.rows, grain), 0);
  parallel_for(p.rows, grain, [&](int64_t begin, int64_t end) {
    int64_t count = 0;
    for (int64_t t = begin * p.cols; t < end * p.cols; ++t) count += p.mask[t] != 0;
    partial[begin / grain] = count;
  });
  int64_t total = 0;
  for (int64_t c : partial) total += c;
  return static_cast<double>(total);
}

// torch.quantile(linear) of the masked entropies at q; keeps tokens with entropy >= it.
float entropy_threshold(const LossProblem& p, double q) {
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

void resolve_counts(LossProblem& p) {
  const grpo_aggregate_options& a = p.options.aggregate;
  p.total_tokens = mask_total(p);
  p.token_count = a.token_count > 0.0 ? a.token_count : std::max(p.total_tokens, 1.0);
  p.sequence_count = a.sequence_count > 0.0 ? a.sequence_count : static_cast<double>(std::max<int64_t>(p.rows, 1));
  p.loss_scale_factor = a.loss_scale_factor > 0.0 ? a.loss_scale_factor : static_cast<double>(std::max<int64_t>(p.cols, 1));
  p.keep_threshold = p.options.top_entropy_quantile < 1.0 ? entropy_threshold(p, 1.0 - p.options.top_entropy_quantile)
                                                          : -std::numeric_limits<float>::infinity();
}

void write_stats(const LossProblem& p, const LossPartial& s, grpo_loss_stats* out) {
  const double n = s.tokens > 0.0 ? s.tokens : kNaN;
  const bool empty_nan = p.options.aggregate.empty_is_nan && s.tokens == 0.0;
  *out = {empty_nan ? kNaN : s.loss, empty_nan ? kNaN : s.policy, p.ref_logp ? s.kl / n : kNaN, s.low / n, s.high / n,
          s.region / n, s.dual / n, s.ratio / n, s.tokens > 0.0 ? s.ratio_min : kNaN,
          s.tokens > 0.0 ? s.ratio_max : kNaN, p.entropy ? s.entropy / n : kNaN, s.ppo_kl / n, s.tokens};
}

}  // namespace

void policy_loss(LossProblem& p, float* grad_logp, grpo_loss_stats* stats) {
  resolve_counts(p);
  const int64_t grain = rows_per_task(p.cols);
  std::vector<LossPartial> partials(block_count(p.rows, grain));
  parallel_for(p.rows, grain, [&](int64_t begin, int64_t end) {
    LossPartial& partial = partials[begin / grain];
    const int64_t bins = p.options.is_level == GRPO_IS_ITEM ? p.options.num_items + 1 : 1;
    if (fast_row_applies(p)) {
      FastScratch scratch(p.cols, bins);
      for (int64_t i = begin; i < end; ++i) fast_loss_row(p, i, scratch, grad_logp, partial);
      return;
    }
    RowScratch scratch(bins);
    for (int64_t i = begin; i < end; ++i) loss_row(p, i, scratch, grad_logp, partial);
  });
  LossPartial total;
  for (const LossPartial& partial : partials) add(total, partial);
  if (total.bad_index >= 0)
    fail(total.bad_what == kBadSegment ? GRPO_ERR_INDEX_RANGE : GRPO_ERR_NON_FINITE,
         "%s at row %lld, column %lld", total.bad_what == kBadSegment ? "segments holds a value below -1"
                                                                      : "a masked-in input (logp, old, ref, advantage, entropy) is not finite",
         static_cast<long long>(total.bad_index / p.cols), static_cast<long long>(total.bad_index % p.cols));
  if (p.options.aggregate.empty_is_nan && total.tokens == 0.0)
    std::fill(grad_logp, grad_logp + p.rows * p.cols, 0.0f);
  if (stats) write_stats(p, total, stats);
}

}  // namespace grpo

namespace {

void check_enum(int32_t value, int32_t last, const char* name) {
  if (value < 0 || value > last) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "%s %d is unknown", name, value);
}

void check_positive(double value, const char* name, bool zero_allowed) {
  if (!std::isfinite(value) || value < 0.0 || (!zero_allowed && value == 0.0))
    grpo::fail(GRPO_ERR_VALUE_RANGE, "%s must be finite and %s 0 (got %g)", name, zero_allowed ? ">=" : ">", value);
}

void check_options(const grpo_loss_options& o) {
  check_enum(o.surrogate.type, GRPO_LOSS_GEO_MEAN, "surrogate.type");
  check_enum(o.is_level, GRPO_IS_ITEM, "is_level");
  check_enum(o.kl.estimator, GRPO_KL_K3, "kl.estimator");
  check_enum(o.kl.clamp, GRPO_KL_CLAMP_OPENRLHF, "kl.clamp");
  check_enum(o.aggregate.mode, GRPO_AGG_TOKEN_SUM_OVER_L, "aggregate.mode");
  const grpo_surrogate& s = o.surrogate;
  for (double v : {s.epsilon_low, s.epsilon_high, s.delta, s.dual_clip_c, s.log_ratio_clamp, s.cispo_cap, s.vespo_k_pos,
                   s.vespo_lambda_pos, s.vespo_k_neg, s.vespo_lambda_neg, o.kl.beta, o.aggregate.token_count,
                   o.aggregate.sequence_count, o.aggregate.loss_scale_factor})
    check_positive(v, "every surrogate, KL and count option", true);
  check_positive(s.sapo_tau_pos, "sapo_tau_pos", false);
  check_positive(s.sapo_tau_neg, "sapo_tau_neg", false);
  if (!(o.aggregate.accumulation_steps >= 1.0)) grpo::fail(GRPO_ERR_VALUE_RANGE, "accumulation_steps must be >= 1");
  if (o.aggregate.mode == GRPO_AGG_TOKEN_SUM_OVER_BL) check_positive(o.aggregate.max_completion_length, "max_completion_length", false);
  if (!(o.top_entropy_quantile > 0.0 && o.top_entropy_quantile <= 1.0))
    grpo::fail(GRPO_ERR_VALUE_RANGE, "top_entropy_quantile must be in (0, 1] (got %g)", o.top_entropy_quantile);
  if (o.is_level == GRPO_IS_ITEM && o.num_items < 1) grpo::fail(GRPO_ERR_VALUE_RANGE, "num_items must be >= 1 at the item level");
}

void check_pointers(const grpo::LossProblem& p, const float* grad_logp) {
  if (p.rows < 0 || p.cols < 0) grpo::fail(GRPO_ERR_SHAPE, "rows and cols must be >= 0");
  if (p.rows == 0 || p.cols == 0) return;
  if (!p.logp || !p.advantages || !p.mask || !grad_logp)
    grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "logp, advantages, mask and grad_logp must not be NULL");
  if (p.options.kl.beta != 0.0 && !p.ref_logp) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "ref_logp is needed when kl.beta != 0");
  if (p.options.is_level == GRPO_IS_ITEM && !p.segments)
    grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "segments are needed at the item level");
  if (p.options.top_entropy_quantile < 1.0 && !p.entropy)
    grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "entropy is needed when top_entropy_quantile < 1");
}

}  // namespace

extern "C" grpo_status grpo_policy_loss(const float* logp, const float* old_logp, const float* ref_logp,
                                        const float* advantages, int32_t advantages_per_token, const uint8_t* mask,
                                        const int32_t* segments, const float* entropy, int64_t rows, int64_t cols,
                                        const grpo_loss_options* options, float* grad_logp, grpo_loss_stats* stats) {
  return grpo::guarded([&] {
    if (!options) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "options must not be NULL");
    check_options(*options);
    grpo::LossProblem p{logp, old_logp, ref_logp, advantages, entropy, mask, segments, advantages_per_token != 0,
                        rows, cols, *options};
    check_pointers(p, grad_logp);
    grpo::policy_loss(p, grad_logp, stats);
  });
}
