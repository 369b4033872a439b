// Batched sampling on the GPU with the CPU's draws: one block per row (grid-stride), the processing order of
// native/include/grpo/sampling.h, exact top-k / top-p cuts by bisection on the logit's bits (no sort), and the
// inverse-CDF draw over fixed-point weights with the same Philox uniform. sampling_row.cuh has the passes.
#include <algorithm>
#include <cfloat>
#include <vector>

#include "device.cuh"
#include "grpo/sampling.h"
#include "philox.cuh"
#include "sampling/sampling_params.h"
#include "sampling/sampling_passes.h"
#include "sampling_device.cuh"
#include "sampling_row.cuh"

namespace grpo::cuda::sampling {

namespace {

struct DeviceRow {
  float temperature, top_p, min_p;
  int32_t top_k;
  float repetition, frequency, presence;
  int64_t history_begin, history_length;
};

struct Flags {
  unsigned long long *non_finite, *penalty, *empty;  // first row; penalty holds row << 32 | token id
};

struct Args {
  const float* logits;  // [rows, vocab]
  int64_t rows, vocab;
  const DeviceRow* params;  // [rows]
  const uint32_t* allow;    // [rows, ceil(vocab / 32)] or NULL
  const int32_t* history;
  uint64_t seed, step, first_row;
  int low_bits;
  float *y, *w;  // scratch [gridDim.x, vocab]
  int32_t* tokens;
  float *logp, *logp_raw;  // [rows] or NULL
  float* probs;            // [rows, vocab]: the probabilities mode when not NULL
  Flags flags;
};

// The CPU's float32 penalty (sampling_penalties.h), unfused.
__device__ float penalise(float y, int64_t count, const DeviceRow& p) {
  y = y > 0.0f ? __fdiv_rn(y, p.repetition) : __fmul_rn(y, p.repetition);
  y = __fsub_rn(y, __fmul_rn(p.frequency, static_cast<float>(count)));
  return __fsub_rn(y, p.presence);
}

// Penalties for each distinct id of the row's history (one thread per first occurrence); true if one
// made a logit NaN or +Infinity.
__device__ bool apply_penalties(float* y, const int32_t* h, int64_t length, const DeviceRow& p, int64_t row,
                                const Flags& flags, Scratch& s) {
  __syncthreads();  // y is complete
  int bad = 0;
  for (int64_t i = threadIdx.x; i < length; i += blockDim.x) {
    const int32_t id = h[i];
    bool first = true;
    for (int64_t j = 0; j < i && first; ++j) first = h[j] != id;
    if (!first || y[id] == -INFINITY) continue;
    int64_t count = 0;
    for (int64_t j = i; j < length; ++j) count += h[j] == id;
    y[id] = penalise(y[id], count, p);
    if (y[id] < INFINITY) continue;
    bad = 1;
    atomicMin(flags.penalty, static_cast<unsigned long long>(row) << 32 | static_cast<uint32_t>(id));
  }
  return block_reduce(bad, Or{}, s.row.i) != 0;
}

// y = x where allowed, else -Infinity; the max of y and whether x holds NaN / +Infinity.
__device__ RowMax load_row(const float* x, int64_t n, const uint32_t* allow, float* y, Scratch& s) {
  float max = -INFINITY;
  int bad = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = x[i];
    bad |= !(v < INFINITY);
    const float kept = allow && !((allow[i >> 5] >> (i & 31)) & 1u) ? -INFINITY : v;
    y[i] = kept;
    max = kept > max ? kept : max;
  }
  return {block_reduce(max, Max{}, s.row.f), block_reduce(bad, Or{}, s.row.i) != 0};
}

__device__ int64_t greedy_token(const float* y, int64_t n, float max, Scratch& s) {
  unsigned long long first = ~0ull;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    if (y[i] == max && static_cast<unsigned long long>(i) < first) first = i;
  return static_cast<int64_t>(block_reduce(first, Min{}, s.u));
}

// The kept set {y >= cut, w >= w_min} after top-k and top-p; w is zeroed below a top-k cut when top-p follows.
__device__ Kept truncate(const float* y, float* w, int64_t n, const DeviceRow& p, WeightSum kept, int low_bits,
                         Scratch& s) {
  float cut = -INFINITY;
  if (p.top_k > 0 && static_cast<unsigned long long>(p.top_k) < kept.positive) {
    cut = threshold_search<false>(y, w, n, static_cast<double>(p.top_k), s);
    if (p.top_p < 1.0f) kept = cut_below(y, w, n, cut, s);
  }
  if (p.top_p < 1.0f) cut = threshold_search<true>(y, w, n, static_cast<double>(p.top_p) * kept.mass, s);
  return {cut, p.min_p, low_bits};  // the max token has w = 1, so p_i >= min_p · p_max is w_i >= min_p
}

__device__ void write_greedy(const Args& a, int64_t row, int64_t token) {
  if (a.probs) {
    for (int64_t i = threadIdx.x; i < a.vocab; i += blockDim.x) a.probs[row * a.vocab + i] = i == token ? 1.0f : 0.0f;
    return;
  }
  if (threadIdx.x != 0) return;
  a.tokens[row] = static_cast<int32_t>(token);
  if (a.logp) a.logp[row] = 0.0f;
  if (a.logp_raw) a.logp_raw[row] = 0.0f;
}

__device__ void draw(const Args& a, int64_t row, const float* y, const float* w, const Kept& k, float max, float inv,
                     double all_mass, Scratch& s) {
  const unsigned long long total = fixed_total(y, w, a.vocab, k, s);
  if (a.probs) {
    for (int64_t i = threadIdx.x; i < a.vocab; i += blockDim.x)
      a.probs[row * a.vocab + i] = static_cast<float>(static_cast<double>(k.q(y[i], w[i])) / static_cast<double>(total));
    return;
  }
  const uint64_t u = philox::draw_u64(a.seed, a.first_row + static_cast<uint64_t>(row), a.step);
  const int64_t token = inverse_cdf(y, w, a.vocab, k, __umul64hi(u, total), s);
  if (threadIdx.x != 0) return;
  a.tokens[row] = static_cast<int32_t>(token);
  const double log_w = static_cast<double>((y[token] - max) * inv);
  if (a.logp) a.logp[row] = static_cast<float>(log_w - log(ldexp(static_cast<double>(total), -(24 + k.low_bits))));
  if (a.logp_raw) a.logp_raw[row] = static_cast<float>(log_w - log(all_mass));
}

__global__ void __launch_bounds__(kThreads) sample_kernel(Args a) {
  __shared__ Scratch s;
  float* y = a.y + blockIdx.x * a.vocab;
  float* w = a.w + blockIdx.x * a.vocab;
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    // The previous row is done with y (thread 0 reads y[token] after the draw's last barrier).
    __syncthreads();
    const DeviceRow p = a.params[row];
    const uint32_t* allow = a.allow ? a.allow + row * ((a.vocab + 31) / 32) : nullptr;
    RowMax m = load_row(a.logits + row * a.vocab, a.vocab, allow, y, s);
    if (m.bad) {
      if (threadIdx.x == 0) atomicMin(a.flags.non_finite, static_cast<unsigned long long>(row));
      continue;
    }
    const bool active = p.repetition != 1.0f || p.frequency != 0.0f || p.presence != 0.0f;
    if (p.history_length > 0 && active) {
      if (apply_penalties(y, a.history + p.history_begin, p.history_length, p, row, a.flags, s)) continue;
      m = block_row_max(y, a.vocab, s.row);
    }
    if (m.max == -INFINITY) {
      if (threadIdx.x == 0) atomicMin(a.flags.empty, static_cast<unsigned long long>(row));
      continue;
    }
    if (p.temperature == 0.0f) {
      write_greedy(a, row, greedy_token(y, a.vocab, m.max, s));
      continue;
    }
    const float inv = fminf(__fdiv_rn(1.0f, p.temperature), FLT_MAX);
    const WeightSum all = exp_weights(y, a.vocab, m.max, inv, w, s);
    const Kept k = truncate(y, w, a.vocab, p, all, a.low_bits, s);
    draw(a, row, y, w, k, m.max, inv, all.mass, s);
  }
}

std::vector<DeviceRow> device_rows(const grpo_sampling_params& params, int64_t rows, int64_t vocab) {
  std::vector<DeviceRow> out(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const grpo::sampling::RowParams p = grpo::sampling::row_params(params, r, vocab);
    out[r] = {p.temperature, p.top_p, p.min_p, p.top_k, p.penalties.repetition, p.penalties.frequency,
              p.penalties.presence, p.history ? p.history - params.history : 0, p.history_length};
  }
  return out;
}

struct DeviceFlags {
  RowFlag non_finite, penalty, empty;
  Flags get() const { return {non_finite.get(), penalty.get(), empty.get()}; }
  void raise() const {
    if (const int64_t row = non_finite.first(); row >= 0)
      fail(GRPO_ERR_NON_FINITE, "logits row %lld contains NaN or +Infinity", static_cast<long long>(row));
    if (const int64_t code = penalty.first(); code >= 0)
      fail(GRPO_ERR_NON_FINITE, "row %lld: the penalties made the logit of token %d NaN or +Infinity",
           static_cast<long long>(code >> 32), static_cast<int>(code & 0xFFFFFFFF));
    if (const int64_t row = empty.first(); row >= 0)
      fail(GRPO_ERR_VALUE_RANGE, "logits row %lld has no allowed token with a finite logit", static_cast<long long>(row));
  }
};

constexpr int64_t kMaxBlocks = 264;  // two rows in flight per H200 SM; bounds the y/w scratch

// Uploads the call's parameters, runs the kernel on device logits in the given mode and downloads its outputs.
void run_on_device(const float* d_logits, int64_t rows, int64_t vocab, const grpo_sampling_params& params,
                   int32_t* tokens, float* logp, float* logp_raw, float* probs) {
  const std::vector<DeviceRow> host_rows = device_rows(params, rows, vocab);
  const int64_t history_size = params.history_offsets ? params.history_offsets[rows] : 0;
  const int64_t blocks = std::min(rows, kMaxBlocks);
  DeviceBuffer<float> y(blocks * vocab), w(blocks * vocab);
  DeviceBuffer<DeviceRow> d_rows(host_rows.data(), rows);
  DeviceBuffer<uint32_t> d_allow(params.allow_bits, rows * ((vocab + 31) / 32));
  DeviceBuffer<int32_t> d_history(params.history, history_size), d_tokens(probs ? 0 : rows);
  DeviceBuffer<float> d_logp(logp ? rows : 0), d_logp_raw(logp_raw ? rows : 0), d_probs(probs ? rows * vocab : 0);
  DeviceFlags flags;
  const int low_bits = grpo::sampling::fixed_point_low_bits(vocab);
  const Args args{d_logits, rows, vocab, d_rows.get(), d_allow.get(), d_history.get(),
                  params.seed, params.step, params.first_row, low_bits, y.get(), w.get(), d_tokens.get(),
                  d_logp.get(), d_logp_raw.get(), d_probs.get(), flags.get()};
  KernelTimer timer;
  sample_kernel<<<static_cast<unsigned>(blocks), kThreads>>>(args);
  check_launch("sample");
  timer.stop();
  flags.raise();
  d_tokens.download(tokens);
  d_logp.download(logp);
  d_logp_raw.download(logp_raw);
  d_probs.download(probs);
}

void run(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params& params, int32_t* tokens,
         float* logp, float* logp_raw, float* probs) {
  DeviceBuffer<float> d_logits(logits, rows * vocab);
  run_on_device(d_logits.get(), rows, vocab, params, tokens, logp, logp_raw, probs);
}

}  // namespace

void sample_device(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params& params, int32_t* tokens,
                   float* logp_raw) {
  grpo::sampling::check_call(logits, rows, vocab, &params);
  if (rows > 0) run_on_device(logits, rows, vocab, params, tokens, nullptr, logp_raw, nullptr);
}

}  // namespace grpo::cuda::sampling

extern "C" grpo_status grpo_sample(const float* logits, int64_t rows, int64_t vocab, const grpo_sampling_params* params,
                                   int32_t* tokens, float* logp, float* logp_raw) {
  return grpo::guarded([&] {
    grpo::sampling::check_call(logits, rows, vocab, params);
    if (rows > 0 && !tokens) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "tokens must not be NULL");
    if (rows > 0) grpo::cuda::sampling::run(logits, rows, vocab, *params, tokens, logp, logp_raw, nullptr);
  });
}

extern "C" grpo_status grpo_sampling_probs(const float* logits, int64_t rows, int64_t vocab,
                                           const grpo_sampling_params* params, float* probs) {
  return grpo::guarded([&] {
    grpo::sampling::check_call(logits, rows, vocab, params);
    if (rows > 0 && !probs) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "probs must not be NULL");
    if (rows > 0) grpo::cuda::sampling::run(logits, rows, vocab, *params, nullptr, nullptr, nullptr, probs);
  });
}
