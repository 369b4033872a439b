// Log-prob scoring over materialised logits [rows, vocab] on the GPU: one block per row (grid-stride over
// rows); the row is read once for its max, once for Σe and Σe·d (from L2 for rows up to a few MB), and once
// more in the backward, which writes the gradient (in place when grad_logits aliases logits).
// Sums are per-thread partials combined in a fixed tree: deterministic, but not the CPU's 16-lane order,
// so logp and entropy agree with the CPU to float rounding (|Δ| ~ 1e-6 relative), not bitwise.
#include <cmath>

#include "device.cuh"
#include "grpo/logprob.h"
#include "logprob/linear_logprob_checks.h"
#include "row_math.cuh"

namespace grpo::cuda {

namespace {

constexpr int kRowThreads = 512;

struct RowFlags {
  unsigned long long* non_finite;  // first row holding NaN or +Infinity
  unsigned long long* all_masked;  // first row that is -Infinity everywhere
};

struct RowStats {
  bool ok;
  float max, log_sum, entropy;  // max of x·scale; log Σ exp(x·scale − max); entropy H
};

__device__ RowStats row_stats(const float* x, int64_t vocab, int64_t row, float scale, RowFlags flags, RowScratch& s) {
  const RowMax m = block_row_max(x, vocab, s);
  const float max = m.max * scale;
  if (m.bad || max == -INFINITY) {
    if (threadIdx.x == 0) atomicMin(m.bad ? flags.non_finite : flags.all_masked, static_cast<unsigned long long>(row));
    return {false, 0.0f, 0.0f, 0.0f};
  }
  const Moments moments = block_moments(x, vocab, scale, max, s);
  const float log_sum = logf(moments.sum);
  return {true, max, log_sum, log_sum - moments.dot / moments.sum};
}

__global__ void __launch_bounds__(kRowThreads) forward_kernel(const float* logits, const int32_t* targets, int64_t rows,
                                                               int64_t vocab, float scale, int32_t ignore_index,
                                                               float* logp, float* entropy, float* lse, RowFlags flags) {
  __shared__ RowScratch scratch;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int32_t target = targets[row];
    const float* x = logits + row * vocab;
    const RowStats r = target == ignore_index ? RowStats{false, 0, 0, 0} : row_stats(x, vocab, row, scale, flags, scratch);
    if (threadIdx.x != 0) continue;
    logp[row] = r.ok ? (x[target] * scale - r.max) - r.log_sum : 0.0f;
    if (entropy) entropy[row] = r.ok ? r.entropy : 0.0f;
    if (lse) lse[row] = r.ok ? r.max + r.log_sum : 0.0f;
  }
}

__global__ void __launch_bounds__(kRowThreads) backward_kernel(const float* logits, const int32_t* targets, int64_t rows,
                                                                int64_t vocab, float scale, int32_t ignore_index,
                                                                const float* grad_logp, const float* grad_entropy,
                                                                float* grad_logits, RowFlags flags) {
  __shared__ RowScratch scratch;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int32_t target = targets[row];
    const float* x = logits + row * vocab;
    float* out = grad_logits + row * vocab;
    const RowStats r = target == ignore_index ? RowStats{false, 0, 0, 0} : row_stats(x, vocab, row, scale, flags, scratch);
    if (!r.ok) {
      for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) out[j] = 0.0f;
      continue;
    }
    const float g_entropy = grad_entropy ? grad_entropy[row] : 0.0f;
    block_row_backward(x, vocab, scale, r.max, r.log_sum, r.entropy, grad_logp[row], g_entropy, target, out);
  }
}

// The backward from the forward's lse (and entropy): log p = x·scale − lse; one read of the row for its NaN /
// +Infinity check, one for the gradient.
__global__ void __launch_bounds__(kRowThreads) saved_backward_kernel(const float* logits, const int32_t* targets,
                                                                      int64_t rows, int64_t vocab, float scale,
                                                                      int32_t ignore_index, const float* lse,
                                                                      const float* entropy, const float* grad_logp,
                                                                      const float* grad_entropy, float* grad_logits,
                                                                      RowFlags flags) {
  __shared__ RowScratch scratch;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int32_t target = targets[row];
    const float* x = logits + row * vocab;
    float* out = grad_logits + row * vocab;
    const bool bad = target != ignore_index && block_row_max(x, vocab, scratch).bad;
    if (bad && threadIdx.x == 0) atomicMin(flags.non_finite, static_cast<unsigned long long>(row));
    if (target == ignore_index || bad) {
      for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) out[j] = 0.0f;
      continue;
    }
    const float g_entropy = grad_entropy ? grad_entropy[row] : 0.0f;
    block_row_backward(x, vocab, scale, lse[row], 0.0f, grad_entropy ? entropy[row] : 0.0f, grad_logp[row], g_entropy,
                       target, out);
  }
}

struct Flags {
  RowFlag non_finite, all_masked;
  RowFlags device() const { return {non_finite.get(), all_masked.get()}; }
  void raise() const {
    if (const int64_t row = non_finite.first(); row >= 0)
      fail(GRPO_ERR_NON_FINITE, "logits row %lld contains NaN or +Infinity", static_cast<long long>(row));
    if (const int64_t row = all_masked.first(); row >= 0)
      fail(GRPO_ERR_VALUE_RANGE, "logits row %lld is -Infinity everywhere", static_cast<long long>(row));
  }
};

// The CPU's checks (native/kernels/logprob/logprob.cc), shared through linear_logprob_checks.h where they coincide.
void check_common(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                  const grpo_logprob_options* options) {
  linear_logprob_checks::logits_options_and_shape(logits, targets, rows, vocab, options);
  linear_logprob_checks::targets(targets, rows, vocab, options->ignore_index);
}

// A backward's arguments, with the CPU backward's status and message for a non-finite upstream gradient (any
// row, ignored ones too).
void check_backward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                    const grpo_logprob_options* options, const float* grad_logp, const float* grad_entropy,
                    const float* grad_logits) {
  check_common(logits, targets, rows, vocab, options);
  if (rows > 0 && (!grad_logp || !grad_logits)) fail(GRPO_ERR_INVALID_ARGUMENT, "grad_logp and grad_logits must not be NULL");
  for (int64_t t = 0; t < rows; ++t)
    if (!std::isfinite(grad_logp[t]) || (grad_entropy && !std::isfinite(grad_entropy[t])))
      fail(GRPO_ERR_NON_FINITE, "upstream gradient at row %lld is not finite", static_cast<long long>(t));
}

int row_blocks(int64_t rows) { return static_cast<int>(rows < 65535 ? (rows > 0 ? rows : 1) : 65535); }

// A backward's device side: logits, targets and upstream gradients uploaded, the gradient written on the device
// (in place too when the caller overwrites its logits) by launch(logits, targets, grad_logp, grad_entropy, out,
// flags), the flags raised, the gradient downloaded.
template <typename Launch>
void run_backward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab, const float* grad_logp,
                  const float* grad_entropy, float* grad_logits, const char* what, Launch&& launch) {
  DeviceBuffer<float> d_logits(logits, rows * vocab), d_grad_logp(grad_logp, rows), d_grad_entropy(grad_entropy, rows);
  DeviceBuffer<int32_t> d_targets(targets, rows);
  DeviceBuffer<float> d_out(grad_logits == logits ? 0 : rows * vocab);
  float* out = grad_logits == logits ? d_logits.get() : d_out.get();
  Flags flags;
  KernelTimer timer;
  launch(d_logits.get(), d_targets.get(), d_grad_logp.get(), d_grad_entropy.get(), out, flags.device());
  check_launch(what);
  timer.stop();
  flags.raise();
  check(cudaMemcpy(grad_logits, out, sizeof(float) * rows * vocab, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}

}  // namespace

}  // namespace grpo::cuda

extern "C" grpo_status grpo_logprob_forward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                            const grpo_logprob_options* options, float* logp, float* entropy) {
  return grpo_logprob_forward_lse(logits, targets, rows, vocab, options, logp, entropy, nullptr);
}

extern "C" grpo_status grpo_logprob_forward_lse(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                                const grpo_logprob_options* options, float* logp, float* entropy, float* lse) {
  using namespace grpo::cuda;
  return grpo::guarded([&] {
    check_common(logits, targets, rows, vocab, options);
    if (rows > 0 && !logp) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "logp must not be NULL");
    if (rows == 0) return;
    DeviceBuffer<float> d_logits(logits, rows * vocab), d_logp(rows), d_entropy(entropy ? rows : 0), d_lse(lse ? rows : 0);
    DeviceBuffer<int32_t> d_targets(targets, rows);
    Flags flags;
    KernelTimer timer;
    forward_kernel<<<row_blocks(rows), kRowThreads>>>(d_logits.get(), d_targets.get(), rows, vocab,
                                                      1.0f / options->temperature, options->ignore_index, d_logp.get(),
                                                      d_entropy.get(), d_lse.get(), flags.device());
    check_launch("logprob forward");
    timer.stop();
    flags.raise();
    d_logp.download(logp);
    d_entropy.download(entropy);
    d_lse.download(lse);
  });
}

extern "C" grpo_status grpo_logprob_backward(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                             const grpo_logprob_options* options, const float* grad_logp,
                                             const float* grad_entropy, float* grad_logits) {
  using namespace grpo::cuda;
  return grpo::guarded([&] {
    check_backward(logits, targets, rows, vocab, options, grad_logp, grad_entropy, grad_logits);
    if (rows == 0) return;
    run_backward(logits, targets, rows, vocab, grad_logp, grad_entropy, grad_logits, "logprob backward",
                 [&](const float* x, const int32_t* ids, const float* g, const float* ge, float* out, RowFlags flags) {
                   backward_kernel<<<row_blocks(rows), kRowThreads>>>(x, ids, rows, vocab, 1.0f / options->temperature,
                                                                      options->ignore_index, g, ge, out, flags);
                 });
  });
}

extern "C" grpo_status grpo_logprob_backward_saved(const float* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                                                   const grpo_logprob_options* options, const float* lse,
                                                   const float* entropy, const float* grad_logp,
                                                   const float* grad_entropy, float* grad_logits) {
  using namespace grpo::cuda;
  return grpo::guarded([&] {
    check_backward(logits, targets, rows, vocab, options, grad_logp, grad_entropy, grad_logits);
    grpo::linear_logprob_checks::saved_stats(targets, rows, options->ignore_index, lse, entropy, grad_entropy);
    if (rows == 0) return;
    DeviceBuffer<float> d_lse(lse, rows), d_entropy(grad_entropy ? entropy : nullptr, rows);
    run_backward(logits, targets, rows, vocab, grad_logp, grad_entropy, grad_logits, "logprob saved backward",
                 [&](const float* x, const int32_t* ids, const float* g, const float* ge, float* out, RowFlags flags) {
                   saved_backward_kernel<<<row_blocks(rows), kRowThreads>>>(x, ids, rows, vocab, 1.0f / options->temperature,
                                                                            options->ignore_index, d_lse.get(),
                                                                            d_entropy.get(), g, ge, out, flags);
                 });
  });
}
