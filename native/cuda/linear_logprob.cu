// Fused LM head + log-prob on the GPU: logits = hidden · weightᵀ (+ bias) exist one [row chunk, vocab chunk]
// tile at a time (tensor-core GEMM, tile_gemm.cuh), reduced per row with an online log-sum-exp as on the CPU
// (native/kernels/logprob/linear_logprob.cc). The backward recomputes each tile, turns it into d(loss)/d(logits) in
// place and multiplies it out into grad_hidden and grad_weight. Workspace: one tile, at most
// kTileRows × chunk_vocab floats. Chunked rather than epilogue-fused: the tile makes one trip through HBM/L2.
// hidden and weight are float32 (the 3xTF32 GEMM) or bfloat16 (the bf16 tensor-core GEMM, which rounds the
// float32 gradient tile to bf16 as it loads it, as the CPU does: grpo/logprob.h). The argument checks are the
// CPU's (native/kernels/logprob/linear_logprob_checks.h).
#include <algorithm>
#include <utility>
#include <vector>

#include "device.cuh"
#include "grpo/logprob.h"
#include "linear_logprob_device.cuh"
#include "logprob/linear_logprob_checks.h"
#include "row_math.cuh"
#include "tile_gemm.cuh"

namespace grpo::cuda {

namespace {

constexpr int kRowThreads = 256;
constexpr int64_t kTileRows = 4096;          // rows per tile on the GPU (chunk_rows is a CPU cache knob)
constexpr int64_t kDefaultChunkVocab = 4096;

struct Shape {
  int64_t rows, hidden, vocab, chunk_rows, chunk_vocab;
};

// Per-row running softmax state of the current row chunk, then its results. Device arrays [chunk_rows].
struct RowState {
  float *max, *sum, *dot, *target_logit;
};

struct Problem {
  const float *hidden, *weight, *bias;  // device; hidden and weight NULL when the inputs are bf16
  const int32_t* targets;               // device
  Shape s;
  float scale;
  int32_t ignore_index;
  const __nv_bfloat16 *hidden16 = nullptr, *weight16 = nullptr;  // device bf16 inputs, or NULL
};

__global__ void add_bias_kernel(float* tile, int64_t n, int64_t cols, const float* bias) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n * cols;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    tile[e] += bias[e % cols];
}

__global__ void reset_kernel(RowState st, int64_t n) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < n; r += gridDim.x * blockDim.x) {
    st.max[r] = -INFINITY;
    st.sum[r] = st.dot[r] = st.target_logit[r] = 0.0f;
  }
}

// One block per tile row: the tile's max and moments, merged into the running state (rebase as on the CPU).
__global__ void __launch_bounds__(kRowThreads) absorb_kernel(const float* tile, int64_t n, int64_t cols, int64_t r0,
                                                              int64_t v0, const int32_t* targets, int32_t ignore_index,
                                                              float scale, RowState st, unsigned long long* bad_row) {
  __shared__ RowScratch scratch;
  for (int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    const int32_t target = targets[r0 + r];
    if (target == ignore_index) continue;
    const float* x = tile + r * cols;
    const RowMax m = block_row_max(x, cols, scratch);
    if (m.bad) {
      if (threadIdx.x == 0) atomicMin(bad_row, static_cast<unsigned long long>(r0 + r));
      continue;
    }
    const float tile_max = m.max * scale;
    if (threadIdx.x == 0 && target >= v0 && target < v0 + cols) st.target_logit[r] = x[target - v0] * scale;
    if (tile_max == -INFINITY) continue;
    const Moments t = block_moments(x, cols, scale, tile_max, scratch);
    if (threadIdx.x != 0) continue;
    const float old_max = st.max[r], new_max = fmaxf(old_max, tile_max);
    const float old_sum = st.sum[r], old_dot = st.dot[r];
    float sum = 0.0f, dot = 0.0f;
    if (old_sum != 0.0f) {
      const float delta = old_max - new_max, factor = expf(delta);
      sum = old_sum * factor, dot = (old_dot + old_sum * delta) * factor;
    }
    const float delta = tile_max - new_max, factor = expf(delta);
    st.sum[r] = sum + t.sum * factor;
    st.dot[r] = dot + (t.dot + t.sum * delta) * factor;
    st.max[r] = new_max;
  }
}

// max, log_sum, logp, entropy of each row (in place over the state arrays: max stays, sum → log_sum,
// dot → entropy, target_logit → logp). Ignored rows give zeros.
__global__ void finish_kernel(RowState st, int64_t n, int64_t r0, const int32_t* targets, int32_t ignore_index,
                              unsigned long long* empty_row) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < n; r += gridDim.x * blockDim.x) {
    if (targets[r0 + r] == ignore_index) {
      st.max[r] = st.sum[r] = st.dot[r] = st.target_logit[r] = 0.0f;
      continue;
    }
    if (st.max[r] == -INFINITY) atomicMin(empty_row, static_cast<unsigned long long>(r0 + r));
    const float log_sum = logf(st.sum[r]);
    st.dot[r] = log_sum - st.dot[r] / st.sum[r];
    st.target_logit[r] = (st.target_logit[r] - st.max[r]) - log_sum;
    st.sum[r] = log_sum;
  }
}

__global__ void __launch_bounds__(kRowThreads) backward_tile_kernel(float* tile, int64_t n, int64_t cols, int64_t r0,
                                                                     int64_t v0, const int32_t* targets,
                                                                     int32_t ignore_index, float scale, RowState st,
                                                                     const float* grad_logp, const float* grad_entropy) {
  for (int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    float* x = tile + r * cols;
    const int32_t target = targets[r0 + r];
    if (target == ignore_index) {
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) x[j] = 0.0f;
      continue;
    }
    const int64_t local = target >= v0 && target < v0 + cols ? target - v0 : -1;
    const float g_entropy = grad_entropy ? grad_entropy[r0 + r] : 0.0f;
    block_row_backward(x, cols, scale, st.max[r], st.sum[r], st.dot[r], grad_logp[r0 + r], g_entropy, local, x);
  }
}

__global__ void column_sums_kernel(const float* tile, int64_t n, int64_t cols, float* out) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < cols; c += gridDim.x * blockDim.x) {
    float sum = out[c];
    for (int64_t r = 0; r < n; ++r) sum += tile[r * cols + c];
    out[c] = sum;
  }
}

// tile [n, cols] = hidden[r0 ..] · weight[v0 ..]ᵀ + bias[v0 ..]
void compute_tile(const Problem& p, int64_t r0, int64_t n, int64_t v0, int64_t cols, float* tile) {
  const int64_t H = p.s.hidden;
  if (p.hidden16) {
    tile_gemm_bf16(false, true, n, cols, H, 1.0f, p.hidden16 + r0 * H, H, p.weight16 + v0 * H, H, 0.0f, tile, cols);
  } else {
    tile_gemm(false, true, n, cols, H, 1.0f, p.hidden + r0 * H, H, p.weight + v0 * H, H, 0.0f, tile, cols);
  }
  if (p.bias) add_bias_kernel<<<blocks_for(n * cols), kThreads>>>(tile, n, cols, p.bias + v0);
}

int row_blocks(int64_t n) { return static_cast<int>(std::min<int64_t>(std::max<int64_t>(n, 1), 65535)); }

// The finished statistics of rows [r0, r0 + n) in `st`; the first non-finite / empty rows in the flags.
void row_chunk_stats(const Problem& p, int64_t r0, int64_t n, float* tile, RowState st, const RowFlag& bad,
                     const RowFlag& empty) {
  reset_kernel<<<blocks_for(n), kThreads>>>(st, n);
  for (int64_t v0 = 0; v0 < p.s.vocab; v0 += p.s.chunk_vocab) {
    const int64_t cols = std::min(p.s.chunk_vocab, p.s.vocab - v0);
    compute_tile(p, r0, n, v0, cols, tile);
    absorb_kernel<<<row_blocks(n), kRowThreads>>>(tile, n, cols, r0, v0, p.targets, p.ignore_index, p.scale, st,
                                                  bad.get());
  }
  finish_kernel<<<blocks_for(n), kThreads>>>(st, n, r0, p.targets, p.ignore_index, empty.get());
  check(cudaGetLastError(), "linear logprob statistics");
}

void raise_flags(const RowFlag& bad, const RowFlag& empty) {
  if (const int64_t row = bad.first(); row >= 0)
    fail(GRPO_ERR_NON_FINITE, "logits row %lld contains NaN or +Infinity", static_cast<long long>(row));
  if (const int64_t row = empty.first(); row >= 0)
    fail(GRPO_ERR_VALUE_RANGE, "logits row %lld is -Infinity everywhere", static_cast<long long>(row));
}

// grad_hidden[r0 ..] += tile · weight[v0 ..];  grad_weight[v0 ..] += tileᵀ · hidden[r0 ..]
void multiply_out(const Problem& p, int64_t r0, int64_t n, int64_t v0, int64_t cols, const float* tile,
                  float* grad_hidden, float* grad_weight) {
  const int64_t H = p.s.hidden;
  if (p.hidden16) {
    tile_gemm_bf16(false, false, n, H, cols, 1.0f, tile, cols, p.weight16 + v0 * H, H, 1.0f, grad_hidden + r0 * H, H);
    tile_gemm_bf16(true, false, cols, H, n, 1.0f, tile, cols, p.hidden16 + r0 * H, H, 1.0f, grad_weight + v0 * H, H);
  } else {
    tile_gemm(false, false, n, H, cols, 1.0f, tile, cols, p.weight + v0 * H, H, 1.0f, grad_hidden + r0 * H, H);
    tile_gemm(true, false, cols, H, n, 1.0f, tile, cols, p.hidden + r0 * H, H, 1.0f, grad_weight + v0 * H, H);
  }
}

// Host hidden and weight: one of the pairs is NULL.
struct HostInputs {
  const float *hidden, *weight;
  const uint16_t *hidden16, *weight16;  // bfloat16 bits
};

// Device copies of the inputs, the tile workspace and the row state of one chunk.
struct Workspace {
  int64_t chunk_rows;
  DeviceBuffer<float> hidden, weight;
  DeviceBuffer<__nv_bfloat16> hidden16, weight16;
  DeviceBuffer<float> bias, tile, state;
  DeviceBuffer<int32_t> targets;
  Workspace(const HostInputs& in, const float* b, const int32_t* t, const Shape& s)
      : chunk_rows(s.chunk_rows), hidden(in.hidden, s.rows * s.hidden), weight(in.weight, s.vocab * s.hidden),
        hidden16(reinterpret_cast<const __nv_bfloat16*>(in.hidden16), s.rows * s.hidden),
        weight16(reinterpret_cast<const __nv_bfloat16*>(in.weight16), s.vocab * s.hidden), bias(b, s.vocab),
        tile(s.chunk_rows * s.chunk_vocab), state(4 * s.chunk_rows), targets(t, s.rows) {}
  RowState rows() const {
    float* base = state.get();
    return {base, base + chunk_rows, base + 2 * chunk_rows, base + 3 * chunk_rows};
  }
  Problem problem(const Shape& s, const grpo_linear_logprob_options& o) const {
    return {hidden.get(), weight.get(), bias.get(), targets.get(), s, 1.0f / o.temperature, o.ignore_index,
            hidden16.get(), weight16.get()};
  }
};

Shape make_shape(int64_t rows, int64_t hidden, int64_t vocab, const grpo_linear_logprob_options* o) {
  linear_logprob_checks::options_and_shape(rows, hidden, vocab, o);
  const int64_t chunk_vocab = o->chunk_vocab ? o->chunk_vocab : kDefaultChunkVocab;
  return {rows, hidden, vocab, std::min(kTileRows, std::max<int64_t>(rows, 1)), std::min(chunk_vocab, vocab)};
}

void download_column(const RowState& st, float* const RowState::*column, int64_t n, float* host) {
  if (host) check(cudaMemcpy(host, st.*column, sizeof(float) * n, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}

}  // namespace

// The device-pointer entry points (linear_logprob_device.cuh): the loops of the C ABI below without the copies.
void linear_logprob_forward_device(const float* hidden, const float* weight, const int32_t* targets, int64_t rows,
                                   int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options& o,
                                   float* logp, float* entropy) {
  const Shape s = make_shape(rows, hidden_size, vocab, &o);
  DeviceBuffer<float> tile(s.chunk_rows * s.chunk_vocab), state(4 * s.chunk_rows);
  const Problem p{hidden, weight, nullptr, targets, s, 1.0f / o.temperature, o.ignore_index};
  float* base = state.get();
  const RowState st{base, base + s.chunk_rows, base + 2 * s.chunk_rows, base + 3 * s.chunk_rows};
  RowFlag bad, empty;
  for (int64_t r0 = 0; r0 < rows; r0 += s.chunk_rows) {
    const int64_t n = std::min(s.chunk_rows, rows - r0);
    row_chunk_stats(p, r0, n, tile.get(), st, bad, empty);
    check(cudaDeviceSynchronize(), "linear logprob forward");
    raise_flags(bad, empty);
    download_column(st, &RowState::target_logit, n, logp + r0);
    download_column(st, &RowState::dot, n, entropy ? entropy + r0 : nullptr);
  }
}

void linear_logprob_backward_device(const float* hidden, const float* weight, const int32_t* targets, int64_t rows,
                                    int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options& o,
                                    const float* grad_logp, const float* grad_entropy, float* grad_hidden,
                                    float* grad_weight) {
  const Shape s = make_shape(rows, hidden_size, vocab, &o);
  DeviceBuffer<float> tile(s.chunk_rows * s.chunk_vocab), state(4 * s.chunk_rows);
  const Problem p{hidden, weight, nullptr, targets, s, 1.0f / o.temperature, o.ignore_index};
  float* base = state.get();
  const RowState st{base, base + s.chunk_rows, base + 2 * s.chunk_rows, base + 3 * s.chunk_rows};
  RowFlag bad, empty;
  for (int64_t r0 = 0; r0 < rows; r0 += s.chunk_rows) {
    const int64_t n = std::min(s.chunk_rows, rows - r0);
    row_chunk_stats(p, r0, n, tile.get(), st, bad, empty);
    check(cudaDeviceSynchronize(), "linear logprob backward statistics");
    raise_flags(bad, empty);
    for (int64_t v0 = 0; v0 < vocab; v0 += s.chunk_vocab) {
      const int64_t cols = std::min(s.chunk_vocab, vocab - v0);
      compute_tile(p, r0, n, v0, cols, tile.get());
      backward_tile_kernel<<<row_blocks(n), kRowThreads>>>(tile.get(), n, cols, r0, v0, targets, o.ignore_index, p.scale,
                                                           st, grad_logp, grad_entropy);
      multiply_out(p, r0, n, v0, cols, tile.get(), grad_hidden, grad_weight);
    }
    check_launch("linear logprob backward");
  }
}

namespace {

// The C ABI's forward (host inputs, host outputs) after its argument checks.
void run_forward(const HostInputs& in, const float* bias, const int32_t* targets, const Shape& s,
                 const grpo_linear_logprob_options& o, float* logp, float* entropy, float* lse) {
  const int64_t rows = s.rows;
  if (rows == 0) return;
  Workspace ws(in, bias, targets, s);
  const Problem p = ws.problem(s, o);
  const RowState st = ws.rows();
  RowFlag bad, empty;
  std::vector<float> row_max(s.chunk_rows), log_sum(s.chunk_rows);
  KernelTimer timer;  // includes the small per-chunk downloads of the row results
  for (int64_t r0 = 0; r0 < rows; r0 += s.chunk_rows) {
    const int64_t n = std::min(s.chunk_rows, rows - r0);
    row_chunk_stats(p, r0, n, ws.tile.get(), st, bad, empty);
    check(cudaDeviceSynchronize(), "linear logprob forward");
    raise_flags(bad, empty);
    download_column(st, &RowState::target_logit, n, logp + r0);
    download_column(st, &RowState::dot, n, entropy ? entropy + r0 : nullptr);
    if (!lse) continue;
    download_column(st, &RowState::max, n, row_max.data());
    download_column(st, &RowState::sum, n, log_sum.data());
    for (int64_t r = 0; r < n; ++r) lse[r0 + r] = row_max[r] + log_sum[r];
  }
  timer.stop();
}

// The C ABI's backward after its argument checks.
void run_backward(const HostInputs& in, const float* bias, const int32_t* targets, const Shape& s,
                  const grpo_linear_logprob_options& o, const float* grad_logp, const float* grad_entropy,
                  float* grad_hidden, float* grad_weight, float* grad_bias, bool accumulate) {
  const int64_t rows = s.rows, hidden_size = s.hidden, vocab = s.vocab;
  Workspace ws(in, bias, targets, s);
  // The gradients start as the caller's buffers (accumulate) or zeros.
  DeviceBuffer<float> g_hidden(rows * hidden_size), g_weight(vocab * hidden_size), g_bias(grad_bias ? vocab : 0);
  for (auto [buffer, host] : {std::pair{&g_hidden, grad_hidden}, {&g_weight, grad_weight}, {&g_bias, grad_bias}})
    accumulate ? buffer->upload(host) : buffer->zero();
  DeviceBuffer<float> d_grad_logp(grad_logp, rows), d_grad_entropy(grad_entropy, rows);
  const Problem p = ws.problem(s, o);
  const RowState st = ws.rows();
  RowFlag bad, empty;
  float* tile = ws.tile.get();
  KernelTimer timer;
  for (int64_t r0 = 0; r0 < rows; r0 += s.chunk_rows) {
    const int64_t n = std::min(s.chunk_rows, rows - r0);
    row_chunk_stats(p, r0, n, tile, st, bad, empty);
    check(cudaDeviceSynchronize(), "linear logprob backward statistics");
    raise_flags(bad, empty);
    for (int64_t v0 = 0; v0 < vocab; v0 += s.chunk_vocab) {
      const int64_t cols = std::min(s.chunk_vocab, vocab - v0);
      compute_tile(p, r0, n, v0, cols, tile);
      backward_tile_kernel<<<row_blocks(n), kRowThreads>>>(tile, n, cols, r0, v0, p.targets, p.ignore_index, p.scale,
                                                           st, d_grad_logp.get(), d_grad_entropy.get());
      multiply_out(p, r0, n, v0, cols, tile, g_hidden.get(), g_weight.get());
      if (grad_bias) column_sums_kernel<<<blocks_for(cols), kThreads>>>(tile, n, cols, g_bias.get() + v0);
    }
    check_launch("linear logprob backward");
  }
  timer.stop();
  g_hidden.download(grad_hidden);
  g_weight.download(grad_weight);
  g_bias.download(grad_bias);
}

HostInputs host_inputs(const float* hidden, const float* weight) { return {hidden, weight, nullptr, nullptr}; }
HostInputs host_inputs(const uint16_t* hidden, const uint16_t* weight) { return {nullptr, nullptr, hidden, weight}; }

// The C ABI entry points for one storage type T of hidden and weight: the CPU's argument checks, then the run.
template <typename T>
grpo_status forward_entry(const T* hidden, const T* weight, const float* bias, const int32_t* targets, int64_t rows,
                          int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options, float* logp,
                          float* entropy, float* lse) {
  return guarded([&] {
    linear_logprob_checks::forward(hidden, weight, bias, targets, rows, hidden_size, vocab, options, logp);
    run_forward(host_inputs(hidden, weight), bias, targets, make_shape(rows, hidden_size, vocab, options), *options, logp,
                entropy, lse);
  });
}

template <typename T>
grpo_status backward_entry(const T* hidden, const T* weight, const float* bias, const int32_t* targets, int64_t rows,
                           int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options,
                           const float* grad_logp, const float* grad_entropy, float* grad_hidden, float* grad_weight,
                           float* grad_bias, int accumulate) {
  return guarded([&] {
    linear_logprob_checks::backward(hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp,
                                    grad_entropy, grad_hidden, grad_weight, grad_bias);
    run_backward(host_inputs(hidden, weight), bias, targets, make_shape(rows, hidden_size, vocab, options), *options,
                 grad_logp, grad_entropy, grad_hidden, grad_weight, grad_bias, accumulate != 0);
  });
}

}  // namespace

}  // namespace grpo::cuda

extern "C" grpo_status grpo_linear_logprob_forward(const float* hidden, const float* weight, const float* bias,
                                        const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                        const grpo_linear_logprob_options* options, float* logp, float* entropy,
                                        float* lse) {
  return grpo::cuda::forward_entry(hidden, weight, bias, targets, rows, hidden_size, vocab, options, logp, entropy, lse);
}

extern "C" grpo_status grpo_linear_logprob_backward(const float* hidden, const float* weight, const float* bias,
                                         const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                         const grpo_linear_logprob_options* options, const float* grad_logp,
                                         const float* grad_entropy, float* grad_hidden, float* grad_weight,
                                         float* grad_bias, int accumulate) {
  return grpo::cuda::backward_entry(hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp,
                                    grad_entropy, grad_hidden, grad_weight, grad_bias, accumulate);
}

extern "C" grpo_status grpo_linear_logprob_forward_bf16(const uint16_t* hidden, const uint16_t* weight, const float* bias,
                                        const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                        const grpo_linear_logprob_options* options, float* logp, float* entropy,
                                        float* lse) {
  return grpo::cuda::forward_entry(hidden, weight, bias, targets, rows, hidden_size, vocab, options, logp, entropy, lse);
}

extern "C" grpo_status grpo_linear_logprob_backward_bf16(const uint16_t* hidden, const uint16_t* weight, const float* bias,
                                         const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                         const grpo_linear_logprob_options* options, const float* grad_logp,
                                         const float* grad_entropy, float* grad_hidden, float* grad_weight,
                                         float* grad_bias, int accumulate) {
  return grpo::cuda::backward_entry(hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp,
                                    grad_entropy, grad_hidden, grad_weight, grad_bias, accumulate);
}

// The saved-statistics backwards (native/include/grpo/logprob.h): the saved lse and entropy are checked as on the
// CPU, then the GPU backward runs as it does without them (it computes its row statistics on the device).
namespace {

grpo_status check_saved(const int32_t* targets, int64_t rows, const grpo_linear_logprob_options* options, const float* lse,
                        const float* entropy, const float* grad_entropy) {
  return grpo::guarded([&] {
    if (options && (targets || rows == 0))
      grpo::linear_logprob_checks::saved_stats(targets, rows, options->ignore_index, lse, entropy, grad_entropy);
  });
}

}  // namespace

extern "C" grpo_status grpo_linear_logprob_backward_saved(const float* hidden, const float* weight, const float* bias,
                                               const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                               const grpo_linear_logprob_options* options, const float* lse,
                                               const float* entropy, const float* grad_logp, const float* grad_entropy,
                                               float* grad_hidden, float* grad_weight, float* grad_bias, int accumulate) {
  const grpo_status saved = check_saved(targets, rows, options, lse, entropy, grad_entropy);
  if (saved != GRPO_OK) return saved;
  return grpo_linear_logprob_backward(hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp,
                                      grad_entropy, grad_hidden, grad_weight, grad_bias, accumulate);
}

extern "C" grpo_status grpo_linear_logprob_backward_saved_bf16(
    const uint16_t* hidden, const uint16_t* weight, const float* bias, const int32_t* targets, int64_t rows,
    int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options, const float* lse, const float* entropy,
    const float* grad_logp, const float* grad_entropy, float* grad_hidden, float* grad_weight, float* grad_bias,
    int accumulate) {
  const grpo_status saved = check_saved(targets, rows, options, lse, entropy, grad_entropy);
  if (saved != GRPO_OK) return saved;
  return grpo_linear_logprob_backward_bf16(hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp,
                                           grad_entropy, grad_hidden, grad_weight, grad_bias, accumulate);
}

// The kept-logits pair (native/include/grpo/logprob.h) is the CPU's: on the GPU a tile's recompute costs less than
// moving [rows, vocab] floats to the host and back, so the forward is unsupported and the backward checks the
// logits pointer and the saved statistics, then recomputes as the saved backward does.
namespace {

grpo_status unsupported_kept_logits() {
  return grpo::guarded([] {
    grpo::fail(GRPO_ERR_UNSUPPORTED,
               "the CUDA backend keeps no logits (it recomputes each tile on the device); run the forward without them");
  });
}

grpo_status check_kept(const float* logits, int64_t rows) {
  return grpo::guarded([&] { grpo::linear_logprob_checks::kept_logits(logits, rows); });
}

}  // namespace

extern "C" grpo_status grpo_linear_logprob_forward_logits(const float*, const float*, const float*, const int32_t*, int64_t,
                                               int64_t, int64_t, const grpo_linear_logprob_options*, float*, float*,
                                               float*, float*) {
  return unsupported_kept_logits();
}

extern "C" grpo_status grpo_linear_logprob_forward_logits_bf16(const uint16_t*, const uint16_t*, const float*,
                                                    const int32_t*, int64_t, int64_t, int64_t,
                                                    const grpo_linear_logprob_options*, float*, float*, float*, float*) {
  return unsupported_kept_logits();
}

extern "C" grpo_status grpo_linear_logprob_backward_logits(const float* hidden, const float* weight, const float* bias,
                                                const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                                const grpo_linear_logprob_options* options, const float* lse,
                                                const float* entropy, const float* logits, const float* grad_logp,
                                                const float* grad_entropy, float* grad_hidden, float* grad_weight,
                                                float* grad_bias, int accumulate) {
  const grpo_status kept = check_kept(logits, rows);
  if (kept != GRPO_OK) return kept;
  return grpo_linear_logprob_backward_saved(hidden, weight, bias, targets, rows, hidden_size, vocab, options, lse, entropy,
                                            grad_logp, grad_entropy, grad_hidden, grad_weight, grad_bias, accumulate);
}

extern "C" grpo_status grpo_linear_logprob_backward_logits_bf16(
    const uint16_t* hidden, const uint16_t* weight, const float* bias, const int32_t* targets, int64_t rows,
    int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options, const float* lse, const float* entropy,
    const float* logits, const float* grad_logp, const float* grad_entropy, float* grad_hidden, float* grad_weight,
    float* grad_bias, int accumulate) {
  const grpo_status kept = check_kept(logits, rows);
  if (kept != GRPO_OK) return kept;
  return grpo_linear_logprob_backward_saved_bf16(hidden, weight, bias, targets, rows, hidden_size, vocab, options, lse,
                                                 entropy, grad_logp, grad_entropy, grad_hidden, grad_weight, grad_bias,
                                                 accumulate);
}
