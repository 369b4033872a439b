// Internals of the policy loss shared by loss.cc (orchestration, reductions) and loss_row.cc
// (the per-row forward and backward). The scalar math both backends use is in loss_token.h.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "grpo/loss.h"

namespace grpo {

struct LossProblem {
  const float *logp, *old_logp, *ref_logp, *advantages, *entropy;
  const uint8_t* mask;
  const int32_t* segments;
  bool advantages_per_token;
  int64_t rows, cols;
  grpo_loss_options options;
  // Resolved before the row pass:
  double total_tokens = 0, token_count = 1, sequence_count = 1, loss_scale_factor = 1;
  float keep_threshold = 0;  // entropy at or above which the policy term is kept
};

constexpr int kBadValue = 1, kBadSegment = 2;

// Sums of one block of rows (combined in block order).
// row_low / row_high / row_region: rows with a flagged token (the per-sequence clip ratios);
// phi: Σ of VESPO's φ over rows or masked tokens (see grpo_loss_stats.phi_seq_mean).
struct LossPartial {
  double loss = 0, policy = 0, kl = 0, low = 0, high = 0, region = 0, dual = 0, ratio = 0, entropy = 0, ppo_kl = 0,
         tokens = 0, row_low = 0, row_high = 0, row_region = 0, phi = 0;
  double ratio_min = std::numeric_limits<double>::infinity(), ratio_max = -std::numeric_limits<double>::infinity();
  int64_t bad_index = -1;  // first flat index of a bad input, -1 if none
  int bad_what = 0;
};

// Per-bin sums of the importance-sampling level (1 bin per row, or K + 1 items).
struct RowScratch {
  std::vector<double> log_ratio, count, grad;
  explicit RowScratch(int64_t bins) : log_ratio(bins), count(bins), grad(bins) {}
};

struct RowSums {
  double tokens = 0, vespo_log_ratio = 0;
};

// Pass 1 of a row: checks its masked inputs (flagging the first bad one in `partial`) and fills
// scratch.log_ratio with each bin's mean log-ratio (the log of the geometric-mean ratio).
RowSums bin_log_ratios(const LossProblem& p, int64_t row, RowScratch& scratch, LossPartial& partial);

// Forward and backward of one row: writes grad_logp[row, :], adds to `partial`.
void loss_row(const LossProblem& p, int64_t row, RowScratch& scratch, float* grad_logp, LossPartial& partial);

// The vectorised row for the clip surrogate at every IS level (loss_fast.cc).
struct FastScratch {
  std::vector<float> floats;  // [3, cols]: log-weights, routed gradients, broadcast advantages
  RowScratch bins;
  FastScratch(int64_t cols, int64_t bins) : floats(3 * cols), bins(bins) {}
};
void fast_loss_row(const LossProblem& p, int64_t row, FastScratch& scratch, float* grad_logp, LossPartial& partial);

// Σ (mask[t] != 0) over [0, n) (loss_fast.cc, vectorised).
int64_t mask_count(const uint8_t* mask, int64_t n);

void policy_loss(LossProblem& p, float* grad_logp, grpo_loss_stats* stats);

}  // namespace grpo
