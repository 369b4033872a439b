// The policy loss over [rows, cols] tokens: forward and analytic backward in one pass per row.
// A row is read once for its importance-sampling log-weights (sequence / item levels), once for
// the per-token terms, and, for sequence / item levels, once more to route d(loss)/d(log-weight)
// back to its tokens. Reductions: one partial per fixed block of rows, combined in block order.
#include "loss.h"

#include <algorithm>
#include <vector>

#include "loss_host.h"
#include "loss_token.h"
#include "runtime/error.h"
#include "runtime/thread_pool.h"

namespace grpo {

namespace {

constexpr int64_t kTokensPerTask = 1 << 14;

void add(LossPartial& into, const LossPartial& p) {
  into.loss += p.loss, into.policy += p.policy, into.kl += p.kl, into.low += p.low, into.high += p.high;
  into.region += p.region, into.dual += p.dual, into.ratio += p.ratio, into.entropy += p.entropy;
  into.ppo_kl += p.ppo_kl, into.tokens += p.tokens, into.row_low += p.row_low, into.row_high += p.row_high;
  into.row_region += p.row_region, into.phi += p.phi;
  into.ratio_min = std::min(into.ratio_min, p.ratio_min), into.ratio_max = std::max(into.ratio_max, p.ratio_max);
  if (p.bad_index >= 0 && into.bad_index < 0) into.bad_index = p.bad_index, into.bad_what = p.bad_what;
}

int64_t rows_per_task(int64_t cols) { return std::max<int64_t>(1, kTokensPerTask / std::max<int64_t>(cols, 1)); }

double mask_total(const LossProblem& p) {
  const int64_t grain = rows_per_task(p.cols);
  std::vector<int64_t> partial(block_count(p.rows, grain), 0);
  parallel_for(p.rows, grain, [&](int64_t begin, int64_t end) {
    partial[begin / grain] = mask_count(p.mask + begin * p.cols, (end - begin) * p.cols);
  });
  int64_t total = 0;
  for (int64_t c : partial) total += c;
  return static_cast<double>(total);
}

void resolve_counts(LossProblem& p) {
  loss::resolve_counts(p, mask_total(p));
  p.keep_threshold = loss_host::keep_threshold(p);
}

}  // namespace

void policy_loss(LossProblem& p, float* grad_logp, grpo_loss_stats* stats) {
  resolve_counts(p);
  const int64_t grain = rows_per_task(p.cols);
  std::vector<LossPartial> partials(block_count(p.rows, grain));
  parallel_for(p.rows, grain, [&](int64_t begin, int64_t end) {
    LossPartial& partial = partials[begin / grain];
    const int64_t bins = p.options.is_level == GRPO_IS_ITEM ? p.options.num_items + 1 : 1;
    if (loss::fast_row_applies(p)) {
      FastScratch scratch(p.cols, bins);
      for (int64_t i = begin; i < end; ++i) fast_loss_row(p, i, scratch, grad_logp, partial);
      return;
    }
    RowScratch scratch(bins);
    for (int64_t i = begin; i < end; ++i) loss_row(p, i, scratch, grad_logp, partial);
  });
  LossPartial total;
  for (const LossPartial& partial : partials) add(total, partial);
  loss_host::finish(p, total, grad_logp, stats);
}

}  // namespace grpo

extern "C" grpo_status grpo_policy_loss(const float* logp, const float* old_logp, const float* ref_logp,
                                        const float* advantages, int32_t advantages_per_token, const uint8_t* mask,
                                        const int32_t* segments, const float* entropy, int64_t rows, int64_t cols,
                                        const grpo_loss_options* options, float* grad_logp, grpo_loss_stats* stats) {
  return grpo::guarded([&] {
    grpo::loss_host::check_options(options);
    grpo::LossProblem p{logp, old_logp, ref_logp, advantages, entropy, mask, segments, advantages_per_token != 0,
                        rows, cols, *options};
    grpo::loss_host::check_pointers(p, grad_logp);
    grpo::policy_loss(p, grad_logp, stats);
  });
}
