// The policy loss on the GPU (the C ABI of native/include/grpo/loss.h): the CPU's scalar math
// (native/kernels/loss/loss_token.h) and host steps (loss_host.h) in four kernels, every reduction in a
// fixed order, so the result is the same on every run:
//   1. one block per row: Σ mask, the row's mean log-ratio and VESPO sum (block tree), the first bad
//      input (a minimum), and at the item level the bins' mean log-ratios, summed by one thread in
//      column order (the CPU's order: these are bitwise the CPU's);
//   2. one block: Σ mask of the batch from the rows' counts (integers: exact in any order);
//   3. one block per row: every token's share (loss_token.h token_share), its gradient, the routing
//      through the sequence mean (block tree) or the item bins (one thread, column order), GMPO's
//      row term; the row's statistics as one partial per row;
//   4. one block: the rows' partials, each thread a strided run of rows, then the block tree.
// The entropy threshold (top_entropy_quantile) is the CPU's, computed on the host from the host arrays.
#include <cstdint>

#include "device.cuh"
#include "grpo/loss.h"
#include "loss/loss.h"
#include "loss/loss_host.h"
#include "loss/loss_token.h"
#include "reduce.cuh"

namespace grpo::cuda {

namespace {

constexpr int kRowThreads = 256;
constexpr int kBatchThreads = 1024;

// The statistics of a row (then of the batch): the additive sums in LossPartial's order, then min and max.
enum Field {
  kLoss, kPolicy, kKl, kLow, kHigh, kRegion, kDual, kRatio, kEntropy, kPpoKl, kTokens, kRowLow, kRowHigh, kRowRegion, kPhi,
  kRatioMin, kRatioMax, kFields
};
struct Sums {
  double v[kFields];
};

// Pass 1 of a row, read by pass 3.
struct RowInfo {
  double tokens, log_ratio_mean, vespo_sum;
};

// The item level's bins, [rows, per_row] each (per_row = K + 1; 0 at other levels).
struct Bins {
  double *log_ratio, *count, *grad;
  int64_t per_row;
};

__device__ void reset(Sums& s) {
  for (int f = 0; f < kFields; ++f) s.v[f] = 0.0;
  s.v[kRatioMin] = INFINITY, s.v[kRatioMax] = -INFINITY;
}

// Every thread gets the block's totals (sums, min, max) of its partial `s`.
__device__ void block_sums(Sums& s, double* scratch) {
  for (int f = 0; f < kRatioMin; ++f) s.v[f] = block_reduce(s.v[f], Sum{}, scratch);
  s.v[kRatioMin] = block_reduce(s.v[kRatioMin], Min{}, scratch);
  s.v[kRatioMax] = -block_reduce(-s.v[kRatioMax], Min{}, scratch);
}

__device__ void add_flags(Sums& s, bool low, bool high, bool dual) {
  s.v[kLow] += low, s.v[kHigh] += high, s.v[kRegion] += low || high, s.v[kDual] += dual;
}

// The item bins of a row, by one thread in column order (the CPU's sums, bit for bit).
__device__ void item_bins(const LossProblem& p, int64_t row, const Bins& bins) {
  double *log_ratio = bins.log_ratio + row * bins.per_row, *count = bins.count + row * bins.per_row;
  double* grad = bins.grad + row * bins.per_row;
  for (int64_t b = 0; b < bins.per_row; ++b) log_ratio[b] = 0.0, count[b] = 0.0, grad[b] = 0.0;
  for (int64_t index = row * p.cols; index < (row + 1) * p.cols; ++index) {
    if (!p.mask[index]) continue;
    const int64_t bin = loss::bin_of(p, index);
    log_ratio[bin] += loss::log_ratio_at(p, index), count[bin] += 1.0;
  }
  for (int64_t b = 0; b < bins.per_row; ++b) log_ratio[b] /= loss::at_least(count[b], 1.0);
}

// Pass 1. `bad` receives min(2·index + (0: segment below -1, 1: non-finite value)) over flagged tokens.
__global__ void __launch_bounds__(kRowThreads) row_sums_kernel(LossProblem p, RowInfo* info, Bins bins,
                                                               unsigned long long* bad) {
  __shared__ double scratch[kMaxWarps];
  __shared__ unsigned long long flags[kMaxWarps];
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    double tokens = 0.0, log_ratio = 0.0, vespo = 0.0;
    unsigned long long first = ~0ull;
    for (int64_t index = row * p.cols + threadIdx.x; index < (row + 1) * p.cols; index += blockDim.x) {
      if (!p.mask[index]) {
        if (first == ~0ull && loss::counts_padding(p) && !loss::inputs_finite(p, row, index, false))
          first = 2ull * static_cast<unsigned long long>(index) + 1;
        continue;
      }
      const bool bad_segment = loss::checks_segments(p) && p.segments[index] < -1;
      if (first == ~0ull && (bad_segment || !loss::inputs_finite(p, row, index)))
        first = 2ull * static_cast<unsigned long long>(index) + (bad_segment ? 0 : 1);
      const float d = loss::log_ratio_at(p, index);
      tokens += 1.0, log_ratio += d, vespo += loss::clamp_float(d, -20.0f, 20.0f);
    }
    tokens = block_reduce(tokens, Sum{}, scratch);
    log_ratio = block_reduce(log_ratio, Sum{}, scratch);
    vespo = block_reduce(vespo, Sum{}, scratch);
    first = block_reduce(first, Min{}, flags);
    if (threadIdx.x == 0) {
      info[row] = {tokens, log_ratio / loss::at_least(tokens, 1.0), vespo};
      if (first != ~0ull) atomicMin(bad, first);
      if (p.options.is_level == GRPO_IS_ITEM) item_bins(p, row, bins);
    }
  }
}

// Pass 2: Σ mask of the batch.
__global__ void __launch_bounds__(kBatchThreads) total_tokens_kernel(const RowInfo* info, int64_t rows, double* total) {
  __shared__ double scratch[kMaxWarps];
  double tokens = 0.0;
  for (int64_t row = threadIdx.x; row < rows; row += blockDim.x) tokens += info[row].tokens;
  tokens = block_reduce(tokens, Sum{}, scratch);
  if (threadIdx.x == 0) *total = tokens;
}

// A padding position of the all-positions mode (never the item level): loss and gradient, no statistics.
__device__ void padding_token(const LossProblem& p, int64_t row, int64_t index, const RowInfo& r, float w, double weight,
                              float phi_pos, float phi_neg, float* grad, double& routed_sum, Sums& s) {
  const int32_t level = p.options.is_level;
  const float d = loss::log_ratio_at(p, index), a = loss::advantage_at(p, row, index);
  const float log_weight = level == GRPO_IS_TOKEN ? d : static_cast<float>(r.log_ratio_mean);
  const loss::TokenShare t = loss::token_share(p.options, log_weight, p.logp[index], a, a >= 0.0f ? phi_pos : phi_neg,
                                               p.ref_logp ? p.ref_logp + index : nullptr, loss::keeps_padding_policy(p), w);
  grad[index] = level == GRPO_IS_SEQUENCE ? t.direct : t.direct + t.routed;
  if (level == GRPO_IS_SEQUENCE) routed_sum += t.routed;
  s.v[kLoss] += weight * t.loss, s.v[kPolicy] += weight * t.policy;
}

// Pass 3 for one token: its share, its gradient (routed through the bin later), its statistics.
__device__ void token(const LossProblem& p, int64_t row, int64_t index, const RowInfo& r, const Bins& bins, float w,
                      double weight, float phi_pos, float phi_neg, float* routed, float* grad, double& routed_sum,
                      Sums& s) {
  const int32_t level = p.options.is_level;
  const float d = loss::log_ratio_at(p, index), logp = p.logp[index], a = loss::advantage_at(p, row, index);
  const float log_weight = level == GRPO_IS_TOKEN  ? d
                           : level == GRPO_IS_ITEM ? static_cast<float>(bins.log_ratio[row * bins.per_row + loss::bin_of(p, index)])
                                                   : static_cast<float>(r.log_ratio_mean);
  const loss::TokenShare t = loss::token_share(p.options, log_weight, logp, a, a >= 0.0f ? phi_pos : phi_neg,
                                               p.ref_logp ? p.ref_logp + index : nullptr, loss::keeps_policy(p, index), w);
  const bool to_bins = level == GRPO_IS_SEQUENCE || level == GRPO_IS_ITEM;
  grad[index] = to_bins ? t.direct : t.direct + t.routed;
  if (level == GRPO_IS_SEQUENCE) routed_sum += t.routed;
  if (level == GRPO_IS_ITEM) routed[index] = t.routed;
  s.v[kLoss] += weight * t.loss, s.v[kPolicy] += weight * t.policy, s.v[kKl] += t.kl, s.v[kRatio] += t.ratio;
  s.v[kPpoKl] -= loss::ppo_log_ratio(p.options, d), s.v[kTokens] += 1.0;
  if (p.options.surrogate.type == GRPO_LOSS_VESPO && p.advantages_per_token) s.v[kPhi] += a >= 0.0f ? phi_pos : phi_neg;
  if (p.entropy) s.v[kEntropy] += p.entropy[index];
  s.v[kRatioMin] = fmin(s.v[kRatioMin], static_cast<double>(t.ratio));
  s.v[kRatioMax] = fmax(s.v[kRatioMax], static_cast<double>(t.ratio));
  add_flags(s, t.low, t.high, t.dual);
}

// Sequence / item levels: d(bin mean)/d(logp_t) = 1 / tokens in the bin, times the bin's Σ routed.
__device__ void route(const LossProblem& p, int64_t row, const RowInfo& r, const Bins& bins, const float* routed,
                      double routed_sum, float* grad, double* scratch) {
  const int32_t level = p.options.is_level;
  if (level == GRPO_IS_SEQUENCE) {
    routed_sum = block_reduce(routed_sum, Sum{}, scratch);
    for (int64_t index = row * p.cols + threadIdx.x; index < (row + 1) * p.cols; index += blockDim.x)
      if (p.mask[index]) grad[index] += static_cast<float>(routed_sum / loss::at_least(r.tokens, 1.0));
  }
  if (level != GRPO_IS_ITEM) return;
  __syncthreads();  // every routed[] of the row is written
  double* bin_grad = bins.grad + row * bins.per_row;
  const double* count = bins.count + row * bins.per_row;
  if (threadIdx.x == 0)
    for (int64_t index = row * p.cols; index < (row + 1) * p.cols; ++index)
      if (p.mask[index]) bin_grad[loss::bin_of(p, index)] += routed[index];
  __syncthreads();
  for (int64_t index = row * p.cols + threadIdx.x; index < (row + 1) * p.cols; index += blockDim.x) {
    if (!p.mask[index]) continue;
    const int64_t bin = loss::bin_of(p, index);
    grad[index] += static_cast<float>(bin_grad[bin] / loss::at_least(count[bin], 1.0));
  }
}

// GMPO's row term (loss_row.cc geo_mean_row), its sums over the block.
__device__ void geo_mean_row(const LossProblem& p, int64_t row, const RowInfo& r, float* grad, Sums& s, double* scratch) {
  const float lo = static_cast<float>(-p.options.surrogate.epsilon_low), hi = static_cast<float>(p.options.surrogate.epsilon_high);
  double clipped_sum = 0.0, advantage_sum = 0.0;
  for (int64_t index = row * p.cols + threadIdx.x; index < (row + 1) * p.cols; index += blockDim.x) {
    if (!p.mask[index]) continue;
    const float d = loss::log_ratio_at(p, index), a = loss::advantage_at(p, row, index), dc = loss::clamp_float(d, lo, hi);
    clipped_sum += loss::geo_clipped(d, a, lo, hi);
    advantage_sum += a;
    add_flags(s, d != dc && a < 0.0f, d != dc && a > 0.0f, false);
  }
  clipped_sum = block_reduce(clipped_sum, Sum{}, scratch);
  advantage_sum = block_reduce(advantage_sum, Sum{}, scratch);
  const double denominator = r.tokens + 1e-8;
  const double value = -advantage_sum / denominator * exp(clipped_sum / denominator);
  const double weight = loss::geo_row_weight(p);
  if (threadIdx.x == 0) s.v[kLoss] += weight * value, s.v[kPolicy] += weight * value;  // added once per row
  for (int64_t index = row * p.cols + threadIdx.x; index < (row + 1) * p.cols; index += blockDim.x) {
    if (!p.mask[index]) continue;
    if (loss::geo_passes(loss::log_ratio_at(p, index), loss::advantage_at(p, row, index), lo, hi))
      grad[index] += static_cast<float>(weight * value / denominator);
  }
}

// Pass 3: a row's tokens, routing and GMPO term; its statistics into row_sums[row].
__global__ void __launch_bounds__(kRowThreads) row_terms_kernel(LossProblem p, const double* total_tokens,
                                                                const RowInfo* info, Bins bins, float* routed,
                                                                float* grad, Sums* row_sums) {
  __shared__ double scratch[kMaxWarps];
  loss::resolve_counts(p, *total_tokens);
  const grpo_surrogate& o = p.options.surrogate;
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const RowInfo r = info[row];
    const double weight = loss::row_weight(p, r.tokens);
    const float phi_pos = loss::vespo_phi(r.vespo_sum, o.vespo_k_pos, o.vespo_lambda_pos);
    const float phi_neg = loss::vespo_phi(r.vespo_sum, o.vespo_k_neg, o.vespo_lambda_neg);
    Sums s;
    reset(s);
    double routed_sum = 0.0;
    for (int64_t index = row * p.cols + threadIdx.x; index < (row + 1) * p.cols; index += blockDim.x) {
      const float w = static_cast<float>(weight);
      if (p.mask[index]) token(p, row, index, r, bins, w, weight, phi_pos, phi_neg, routed, grad, routed_sum, s);
      else if (loss::counts_padding(p)) padding_token(p, row, index, r, w, weight, phi_pos, phi_neg, grad, routed_sum, s);
      else grad[index] = 0.0f;
    }
    route(p, row, r, bins, routed, routed_sum, grad, scratch);
    if (o.type == GRPO_LOSS_GEO_MEAN) geo_mean_row(p, row, r, grad, s, scratch);
    block_sums(s, scratch);
    s.v[kRowLow] = s.v[kLow] > 0.0, s.v[kRowHigh] = s.v[kHigh] > 0.0, s.v[kRowRegion] = s.v[kRegion] > 0.0;
    if (o.type == GRPO_LOSS_VESPO && !p.advantages_per_token) s.v[kPhi] = p.advantages[row] >= 0.0f ? phi_pos : phi_neg;
    if (threadIdx.x == 0) row_sums[row] = s;
  }
}

// Pass 4: the batch's statistics from the rows' partials.
__global__ void __launch_bounds__(kBatchThreads) batch_sums_kernel(const Sums* row_sums, int64_t rows, Sums* total) {
  __shared__ double scratch[kMaxWarps];
  Sums s;
  reset(s);
  for (int64_t row = threadIdx.x; row < rows; row += blockDim.x) {
    for (int f = 0; f < kRatioMin; ++f) s.v[f] += row_sums[row].v[f];
    s.v[kRatioMin] = fmin(s.v[kRatioMin], row_sums[row].v[kRatioMin]);
    s.v[kRatioMax] = fmax(s.v[kRatioMax], row_sums[row].v[kRatioMax]);
  }
  block_sums(s, scratch);
  if (threadIdx.x == 0) *total = s;
}

LossPartial partial_of(const Sums& s, int64_t bad) {
  LossPartial t;
  t.loss = s.v[kLoss], t.policy = s.v[kPolicy], t.kl = s.v[kKl], t.low = s.v[kLow], t.high = s.v[kHigh];
  t.region = s.v[kRegion], t.dual = s.v[kDual], t.ratio = s.v[kRatio], t.entropy = s.v[kEntropy];
  t.ppo_kl = s.v[kPpoKl], t.tokens = s.v[kTokens], t.ratio_min = s.v[kRatioMin], t.ratio_max = s.v[kRatioMax];
  t.row_low = s.v[kRowLow], t.row_high = s.v[kRowHigh], t.row_region = s.v[kRowRegion], t.phi = s.v[kPhi];
  if (bad >= 0) t.bad_index = bad / 2, t.bad_what = bad % 2 ? kBadValue : kBadSegment;
  return t;
}

// The device copies of a problem's inputs (absent optional inputs stay NULL).
struct DeviceInputs {
  DeviceBuffer<float> logp, old_logp, ref_logp, advantages, entropy;
  DeviceBuffer<uint8_t> mask;
  DeviceBuffer<int32_t> segments;
  explicit DeviceInputs(const LossProblem& p)
      : logp(p.logp, p.rows * p.cols), old_logp(p.old_logp, p.rows * p.cols), ref_logp(p.ref_logp, p.rows * p.cols),
        advantages(p.advantages, p.advantages_per_token ? p.rows * p.cols : p.rows), entropy(p.entropy, p.rows * p.cols),
        mask(p.mask, p.rows * p.cols), segments(p.segments, p.rows * p.cols) {}
  LossProblem on_device(const LossProblem& p) const {
    LossProblem d = p;
    d.logp = logp.get(), d.old_logp = old_logp.get(), d.ref_logp = ref_logp.get(), d.advantages = advantages.get();
    d.entropy = entropy.get(), d.mask = mask.get(), d.segments = segments.get();
    return d;
  }
};

void policy_loss(LossProblem& p, float* grad_logp, grpo_loss_stats* stats) {
  p.keep_threshold = loss_host::keep_threshold(p);
  if (p.rows == 0 || p.cols == 0) return loss_host::finish(p, LossPartial{}, grad_logp, stats);
  const DeviceInputs inputs(p);
  const LossProblem d = inputs.on_device(p);
  const int64_t per_row = p.options.is_level == GRPO_IS_ITEM ? p.options.num_items + 1 : 0;
  DeviceBuffer<double> bin_sums(3 * p.rows * per_row), total_tokens(1);
  DeviceBuffer<float> routed(per_row ? p.rows * p.cols : 0), grad(p.rows * p.cols);
  DeviceBuffer<RowInfo> info(p.rows);
  DeviceBuffer<Sums> row_sums(p.rows), total(1);
  const Bins bins{bin_sums.get(), bin_sums.get() + p.rows * per_row, bin_sums.get() + 2 * p.rows * per_row, per_row};
  const RowFlag bad;
  const int row_blocks = blocks_for(p.rows, 1);
  KernelTimer timer;
  row_sums_kernel<<<row_blocks, kRowThreads>>>(d, info.get(), bins, bad.get());
  total_tokens_kernel<<<1, kBatchThreads>>>(info.get(), p.rows, total_tokens.get());
  row_terms_kernel<<<row_blocks, kRowThreads>>>(d, total_tokens.get(), info.get(), bins, routed.get(), grad.get(), row_sums.get());
  batch_sums_kernel<<<1, kBatchThreads>>>(row_sums.get(), p.rows, total.get());
  check_launch("policy loss");
  timer.stop();
  grad.download(grad_logp);
  Sums sums;
  total.download(&sums);
  loss_host::finish(p, partial_of(sums, bad.first()), grad_logp, stats);
}

}  // namespace

}  // namespace grpo::cuda

extern "C" grpo_status grpo_policy_loss(const float* logp, const float* old_logp, const float* ref_logp,
                                        const float* advantages, int32_t advantages_per_token, const uint8_t* mask,
                                        const int32_t* segments, const float* entropy, int64_t rows, int64_t cols,
                                        const grpo_loss_options* options, float* grad_logp, grpo_loss_stats* stats) {
  return grpo::guarded([&] {
    grpo::loss_host::check_options(options);
    grpo::LossProblem p{logp, old_logp, ref_logp, advantages, entropy, mask, segments, advantages_per_token != 0,
                        rows, cols, *options};
    grpo::loss_host::check_pointers(p, grad_logp);
    grpo::cuda::policy_loss(p, grad_logp, stats);
  });
}
