// Batched sampling: blocks of rows per task; each row is read from DRAM once (max, NaN check: by the
// previous row's exp pass within a block, so the read overlaps its arithmetic), its weights go to L2-resident scratch, exact top-k / top-p cuts come from a threshold search (sampling_select.h)
// and one inverse-CDF draw in fixed point makes the token depend only on (logits, params, seed, row, step).
#include "grpo/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/error.h"
#include "runtime/philox.h"
#include "runtime/simd.h"
#include "runtime/thread_pool.h"
#include "sampling_params.h"
#include "sampling_passes.h"
#include "sampling_penalties.h"
#include "sampling_select.h"

namespace grpo::sampling {

namespace {

constexpr int64_t kFloatsPerTask = 1 << 16;
constexpr int64_t kRowsPerTask = 8;  // at most, for blocks whose rows read the next one's maximum

struct Scratch {
  std::vector<float> y, w;               // [vocab] each
  std::vector<float> block_max;          // [ceil(vocab / kMaxBlock)]
  SearchScratch search;
  std::vector<uint64_t> block_sums;      // [ceil(vocab / kDrawBlock)]
  std::vector<int32_t> history;
};

Scratch& scratch_for(int64_t vocab) {
  thread_local Scratch scratch;
  if (static_cast<int64_t>(scratch.y.size()) < vocab) {
    scratch.y.resize(vocab);
    scratch.w.resize(vocab);
    scratch.block_max.resize((vocab + kMaxBlock - 1) / kMaxBlock);
    scratch.block_sums.resize((vocab + kDrawBlock - 1) / kDrawBlock);
  }
  return scratch;
}

// A row after mask, penalties and temperature: the distribution logp_raw is taken under.
struct Prepared {
  const float* y;         // [vocab]: the logits themselves, or the masked / penalised copy in scratch
  float max;
  float inv_temperature;  // 0 for greedy rows
  WeightSum all;
  bool block_sums_done = false;  // exp_weights filled scratch.block_sums (nothing is cut)
};

// A row's simd::max_checked, when the previous row's exp pass read it (NextMax).
struct KnownMax {
  bool known = false;
  float max = 0.0f;
  bool bad = false;
};

[[noreturn]] void fail_row(grpo_status status, int64_t row, const char* what) {
  fail(status, "logits row %lld %s", static_cast<long long>(row), what);
}

// The masked and penalised copy of x in scratch; returns its max.
float masked_row(const float* x, int64_t vocab, int64_t row, const RowParams& p, Scratch& s) {
  masked_copy(x, vocab, p.allow, s.y.data());
  int32_t bad_id = 0;
  if (p.history_length > 0 && p.penalties.active() &&
      !apply_penalties(s.y.data(), p.history, p.history_length, p.penalties, s.history, &bad_id))
    fail(GRPO_ERR_NON_FINITE, "row %lld: the penalties made the logit of token %d NaN or +Infinity",
         static_cast<long long>(row), bad_id);
  bool bad = false;
  return simd::max_checked(s.y.data(), vocab, &bad);
}

// known: this row's maximum on entry (when read with the previous row), the next row's on return
// (read here when next, the next row's logits, is not NULL and the weights are computed).
Prepared prepare_row(const float* x, const float* next, int64_t vocab, int64_t row, const RowParams& p, Scratch& s,
                     KnownMax& known) {
  bool bad = known.bad;
  Prepared prep{x, known.known ? known.max : simd::max_checked(x, vocab, &bad), 0.0f, {1.0, 1, 0}};
  known = KnownMax{};
  if (bad) fail_row(GRPO_ERR_NON_FINITE, row, "contains NaN or +Infinity");
  if (p.allow || (p.history_length > 0 && p.penalties.active())) {
    prep.max = masked_row(x, vocab, row, p, s);
    prep.y = s.y.data();
  }
  if (prep.max == -INFINITY) fail_row(GRPO_ERR_VALUE_RANGE, row, "has no allowed token with a finite logit");
  if (p.temperature == 0.0f) return prep;
  prep.inv_temperature = std::fmin(1.0f / p.temperature, std::numeric_limits<float>::max());
  // Nothing will be cut: the draw's block sums come with the exp pass.
  const bool uncut = p.top_k == 0 && p.top_p == 1.0f && p.min_p == 0.0f;
  NextMax next_max{next, 0.0f, false};
  prep.all = exp_weights(prep.y, vocab, prep.max, prep.inv_temperature, s.w.data(), fixed_point_low_bits(vocab),
                         uncut ? s.block_sums.data() : nullptr, next ? &next_max : nullptr);
  if (next) known = KnownMax{true, next_max.max, next_max.bad};
  prep.block_sums_done = uncut;
  return prep;
}

// Top-k, then top-p on what remains, then min-p: the kept set is {w >= returned threshold}.
float truncate_row(int64_t vocab, const RowParams& p, const Prepared& prep, Scratch& s) {
  const bool top_k = p.top_k > 0 && p.top_k < prep.all.positive, top_p = p.top_p < 1.0f;
  if (!top_k && !top_p) return p.min_p;  // the max token has w = 1 exactly: p_i >= min_p · p_max is w_i >= min_p
  block_maxima(s.w.data(), vocab, s.block_max.data());
  SearchInput in{prep.y, s.w.data(), s.block_max.data(), vocab, Measure::kCount, 0.0, prep.all.positive,
                 prep.all.mass, 0.0f, 0.0f};
  Cut cut{0.0f, prep.all.positive, prep.all.mass};
  if (top_k) {
    in.target = static_cast<double>(p.top_k);
    cut = threshold_search(in, s.search);
  }
  if (top_p) {
    in.measure = Measure::kMass;
    in.positive = cut.kept;
    in.mass = cut.mass;
    in.floor = cut.threshold;  // the passes and the window never reach below the top-k cut
    in.target = static_cast<double>(p.top_p) * cut.mass;
    // mass(w < ε) <= vocab · ε, so F(ε) >= target when ε <= (mass - target) / vocab: a first bracket.
    in.first_pivot = static_cast<float>((cut.mass - in.target) / static_cast<double>(vocab));
    cut = threshold_search(in, s.search);
  }
  return std::fmax(cut.threshold, p.min_p);
}

// The block maxima when truncate_row computed them (upper bounds of w), else NULL.
const float* bounds_if_cut(const RowParams& p, const Prepared& prep, const Scratch& s) {
  return (p.top_k > 0 && p.top_k < prep.all.positive) || p.top_p < 1.0f ? s.block_max.data() : nullptr;
}

struct Draw {
  int32_t token;
  double kept_mass;  // Σ w over the kept tokens
};

// Inverse CDF in token-id order over q = fixed_point(w): block sums first, then the one block.
Draw draw_row(int64_t vocab, const RowParams& p, const Prepared& prep, float threshold, Scratch& s) {
  const int low_bits = fixed_point_low_bits(vocab);
  const uint64_t total = prep.block_sums_done ? prep.all.fixed
                                              : draw_block_sums(s.w.data(), bounds_if_cut(p, prep, s), vocab, threshold,
                                                                low_bits, s.block_sums.data());
  const uint64_t u = philox::draw_u64(p.seed, p.counter_row, p.step);
  uint64_t target = static_cast<uint64_t>((static_cast<unsigned __int128>(u) * total) >> 64);
  int64_t begin = 0;
  for (int64_t b = 0; target >= s.block_sums[b]; ++b, begin += kDrawBlock) target -= s.block_sums[b];
  int64_t token = begin;
  for (;; ++token) {
    const uint64_t q = s.w[token] >= threshold ? fixed_point(s.w[token], low_bits) : 0;
    if (target < q) break;
    target -= q;
  }
  return {static_cast<int32_t>(token), std::ldexp(static_cast<double>(total), -(24 + low_bits))};
}

int32_t greedy_token(const float* y, float max) {
  int32_t token = 0;
  while (y[token] != max) ++token;
  return token;
}

void sample_row(const float* x, const float* next, int64_t vocab, int64_t row, const RowParams& p, KnownMax& known,
                int32_t* token, float* logp, float* logp_raw) {
  Scratch& s = scratch_for(vocab);
  const Prepared prep = prepare_row(x, next, vocab, row, p, s, known);
  if (prep.inv_temperature == 0.0f) {
    *token = greedy_token(prep.y, prep.max);
    if (logp) *logp = 0.0f;
    if (logp_raw) *logp_raw = 0.0f;
    return;
  }
  const float threshold = truncate_row(vocab, p, prep, s);
  const Draw draw = draw_row(vocab, p, prep, threshold, s);
  *token = draw.token;
  const double log_w = static_cast<double>((prep.y[draw.token] - prep.max) * prep.inv_temperature);
  if (logp) *logp = static_cast<float>(log_w - std::log(draw.kept_mass));
  if (logp_raw) *logp_raw = static_cast<float>(log_w - std::log(prep.all.mass));
}

void probs_row(const float* x, const float* next, int64_t vocab, int64_t row, const RowParams& p, KnownMax& known,
               float* probs) {
  Scratch& s = scratch_for(vocab);
  const Prepared prep = prepare_row(x, next, vocab, row, p, s, known);
  if (prep.inv_temperature == 0.0f) {
    for (int64_t i = 0; i < vocab; ++i) probs[i] = 0.0f;
    probs[greedy_token(prep.y, prep.max)] = 1.0f;
    return;
  }
  const float threshold = truncate_row(vocab, p, prep, s);
  const int low_bits = fixed_point_low_bits(vocab);
  const double total = static_cast<double>(
      draw_block_sums(s.w.data(), bounds_if_cut(p, prep, s), vocab, threshold, low_bits, s.block_sums.data()));
  for (int64_t i = 0; i < vocab; ++i)
    probs[i] = s.w[i] >= threshold ? static_cast<float>(static_cast<double>(fixed_point(s.w[i], low_bits)) / total) : 0.0f;
}

// Rows are independent, so the blocks only balance the pool (16 blocks or more when the batch allows)
// and let a row's exp pass read the next row of its block.
int64_t rows_per_task(int64_t rows, int64_t vocab) {
  return std::max(std::max<int64_t>(1, kFloatsPerTask / vocab), std::min(kRowsPerTask, rows / 16));
}

// fn(row logits, next row's logits in the block or NULL, row, params, known maximum).
template <typename RowFn>
void for_each_row(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params& params, RowFn&& fn) {
  parallel_for(rows, rows_per_task(rows, vocab), [&](int64_t begin, int64_t end) {
    KnownMax known;
    for (int64_t r = begin; r < end; ++r)
      fn(logits + r * vocab, r + 1 < end ? logits + (r + 1) * vocab : nullptr, r, row_params(params, r, vocab), known);
  });
}

}  // namespace

}  // namespace grpo::sampling

extern "C" grpo_status grpo_sample(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params* params,
                                   int32_t* tokens, float* logp, float* logp_raw) {
  using namespace grpo::sampling;
  return grpo::guarded([&] {
    check_call(logits, rows, vocab, params);
    if (rows > 0 && !tokens) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "tokens must not be NULL");
    for_each_row(logits, rows, vocab, *params,
                 [&](const float* x, const float* next, int64_t r, const RowParams& p, KnownMax& known) {
                   sample_row(x, next, vocab, r, p, known, tokens + r, logp ? logp + r : nullptr,
                              logp_raw ? logp_raw + r : nullptr);
                 });
  });
}

extern "C" grpo_status grpo_sampling_probs(const float* logits, int64_t rows, int64_t vocab,
                                           const grpo_sampling_params* params, float* probs) {
  using namespace grpo::sampling;
  return grpo::guarded([&] {
    check_call(logits, rows, vocab, params);
    if (rows > 0 && !probs) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "probs must not be NULL");
    for_each_row(logits, rows, vocab, *params,
                 [&](const float* x, const float* next, int64_t r, const RowParams& p, KnownMax& known) {
                   probs_row(x, next, vocab, r, p, known, probs + r * vocab);
                 });
  });
}

extern "C" void grpo_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]) {
  const grpo::philox::Block block =
      grpo::philox::philox4x32_10({{counter[0], counter[1], counter[2], counter[3]}}, key[0], key[1]);
  for (int i = 0; i < 4; ++i) out[i] = block.v[i];
}
