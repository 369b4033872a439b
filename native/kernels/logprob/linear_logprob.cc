// Fused LM head + log-prob: logits = hidden · weightᵀ (+ bias) are produced one
// [chunk_rows, chunk_vocab] tile at a time and reduced with an online log-sum-exp, so the
// [rows, vocab] matrix never exists (at T=8192, V=151936 it would be 5 GB of float32).
// Backward recomputes each tile, turns it into d(loss)/d(logits) in place and multiplies it
// out into grad_hidden and grad_weight before the next tile. Given the forward's per-row
// log-sum-exp (and entropy), it skips its own statistics pass: 3 products per tile instead of 4. Given the
// logits the forward kept (the caller's [rows, vocab], where memory allows), it reads each tile instead of
// recomputing it: 2 products per tile, the same bits. The products go through a Head (linear_logprob.h):
// float32 here, bfloat16 in linear_logprob_bf16.cc.
#include "linear_logprob.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gemm/gemm.h"
#include "runtime/error.h"
#include "runtime/simd.h"
#include "runtime/stream_store.h"
#include "runtime/thread_pool.h"
#include "softmax_row.h"

namespace grpo::linear_logprob {

namespace {

// A tile of 512 × 2048 floats = 4 MB, the workspace. The vocab tiles are the outer loop: each weight slice is packed
// once and its tile computed for every row block in turn (a row-block-outer loop re-packed the whole weight for
// every row block: 6–10% of a forward at T 2048, H 512, V 32768; docs/performance.md).
constexpr int64_t kDefaultChunkRows = 512;
constexpr int64_t kDefaultChunkVocab = 2048;

// Running softmax statistics of one row across vocab tiles.
struct OnlineRow {
  OnlineSoftmax softmax;
  float target_logit = 0.0f;
};

// tile [rows_in_tile, cols] = hidden[r0 ..] · weight[v0 ..]ᵀ + bias[v0 ..]
void compute_tile(Head& head, const float* bias, int64_t r0, int64_t rows_in_tile, int64_t v0, int64_t cols, float* tile) {
  head.logits(r0, rows_in_tile, v0, cols, tile);
  if (!bias) return;
  for (int64_t r = 0; r < rows_in_tile; ++r)
    for (int64_t c = 0; c < cols; ++c) tile[r * cols + c] += bias[v0 + c];
}

void absorb_tile_row(const float* x, int64_t cols, int64_t row, int64_t v0, int32_t target, float scale, OnlineRow& state) {
  if (target >= v0 && target < v0 + cols) state.target_logit = x[target - v0] * scale;
  state.softmax.absorb(x, cols, scale);
  if (!state.softmax.finite)
    fail(GRPO_ERR_NON_FINITE, "logits row %lld (vocab %lld..) contains NaN or +Infinity", static_cast<long long>(row),
         static_cast<long long>(v0));
}

// Calls fn(r0, n, v0, cols) for every tile: vocab tiles in order, and within each the row blocks in order.
template <typename Fn> void for_each_tile(const Shape& s, const Fn& fn) {
  for (int64_t v0 = 0; v0 < s.vocab; v0 += s.chunk_vocab)
    for (int64_t r0 = 0; r0 < s.rows; r0 += s.chunk_rows)
      fn(r0, std::min(s.chunk_rows, s.rows - r0), v0, std::min(s.chunk_vocab, s.vocab - v0));
}

// kept [rows, vocab]: row r0 + r of the tile written at column v0 (x · 1 is x), streamed when the whole array
// is larger than the caches.
void keep_tile_row(const float* x, int64_t cols, const Shape& s, int64_t row, int64_t v0, float* kept) {
  float* out = kept + row * s.vocab + v0;
  if (simd::streams_output(s.rows * s.vocab)) simd::stream_scaled(out, x, cols, 1.0f);
  else std::copy(x, x + cols, out);
}

// Running statistics of every row (state [rows]), absorbing the vocab tiles in order; kept [rows, vocab] (null:
// none) receives every tile.
void row_stats(Head& head, const float* bias, const int32_t* targets, const Shape& s, const grpo_linear_logprob_options& o,
               float* tile, float* kept, std::vector<OnlineRow>& state) {
  const float scale = 1.0f / o.temperature;
  state.assign(static_cast<size_t>(s.rows), OnlineRow{});
  for_each_tile(s, [&](int64_t r0, int64_t n, int64_t v0, int64_t cols) {
    compute_tile(head, bias, r0, n, v0, cols, tile);
    parallel_for(n, 8, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        if (kept) keep_tile_row(tile + r * cols, cols, s, r0 + r, v0, kept);
        if (targets[r0 + r] == o.ignore_index) continue;
        absorb_tile_row(tile + r * cols, cols, r0 + r, v0, targets[r0 + r], scale, state[r0 + r]);
      }
      if (kept) simd::stream_fence();
    });
  });
}

struct RowOutput {
  float max, log_sum, logp, entropy;
};

RowOutput finish_row(const OnlineRow& state, int64_t row) {
  const OnlineSoftmax& stats = state.softmax;
  if (stats.max == -INFINITY) fail(GRPO_ERR_VALUE_RANGE, "logits row %lld is -Infinity everywhere", static_cast<long long>(row));
  const float log_sum = stats.log_sum();
  return {stats.max, log_sum, (state.target_logit - stats.max) - log_sum, stats.entropy()};
}

// Row `row` of the kept logits from column v0 (the forward's values, unless the caller changed them since).
const float* kept_row(const float* kept, int64_t cols, const Shape& s, int64_t row, int64_t v0) {
  const float* x = kept + row * s.vocab + v0;
  bool bad = false;
  simd::max_checked(x, cols, &bad);
  if (bad)
    fail(GRPO_ERR_NON_FINITE, "logits row %lld (vocab %lld..) contains NaN or +Infinity", static_cast<long long>(row),
         static_cast<long long>(v0));
  return x;
}

// The tile's gradient from its logits (in the tile, or kept [rows, vocab] when not null), written into the tile, then
// multiplied out (rows: every row's statistics).
void backward_tile(Head& head, const int32_t* targets, const grpo_linear_logprob_options& o, const Shape& s, int64_t r0,
                   int64_t n, int64_t v0, int64_t cols, const std::vector<RowOutput>& rows, const float* kept, float* tile,
                   const Gradients& g) {
  const float scale = 1.0f / o.temperature;
  parallel_for(n, 8, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* out = tile + r * cols;
      const int32_t target = targets[r0 + r];
      if (target == o.ignore_index) {
        std::fill(out, out + cols, 0.0f);
        continue;
      }
      const float* x = kept ? kept_row(kept, cols, s, r0 + r, v0) : out;
      const int64_t local_target = target >= v0 && target < v0 + cols ? target - v0 : -1;
      const RowOutput& row = rows[r0 + r];
      softmax_row_backward(x, cols, scale, row.max, row.log_sum, row.entropy, g.logp[r0 + r],
                           g.entropy ? g.entropy[r0 + r] : 0.0f, local_target, out);
    }
  });
  if (g.bias) {
    parallel_for(cols, 256, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c)
        for (int64_t r = 0; r < n; ++r) g.bias[v0 + c] += tile[r * cols + c];
    });
  }
  head.multiply_out(r0, n, v0, cols, tile, g.hidden, g.weight);
}

// The rows' statistics from the forward: log p_j = x_j·scale − lse, i.e. max = lse and log_sum = 0.
void saved_rows(const SavedStats& saved, int64_t rows_count, std::vector<RowOutput>& rows) {
  rows.resize(static_cast<size_t>(rows_count));
  for (int64_t r = 0; r < rows_count; ++r) rows[r] = {saved.lse[r], 0.0f, 0.0f, saved.entropy ? saved.entropy[r] : 0.0f};
}

// Every row's statistics from a pass over the logits (ignored rows: zeros); kept as in row_stats.
void computed_rows(Head& head, const float* bias, const int32_t* targets, const Shape& s, const grpo_linear_logprob_options& o,
                   float* tile, float* kept, std::vector<RowOutput>& rows) {
  std::vector<OnlineRow> state;
  row_stats(head, bias, targets, s, o, tile, kept, state);
  rows.resize(static_cast<size_t>(s.rows));
  for (int64_t r = 0; r < s.rows; ++r) rows[r] = targets[r] == o.ignore_index ? RowOutput{} : finish_row(state[r], r);
}

}  // namespace

Shape make_shape(int64_t rows, int64_t hidden, int64_t vocab, const grpo_linear_logprob_options& o) {
  const int64_t chunk_rows = o.chunk_rows ? o.chunk_rows : kDefaultChunkRows;
  const int64_t chunk_vocab = o.chunk_vocab ? o.chunk_vocab : kDefaultChunkVocab;
  return {rows, hidden, vocab, std::min(chunk_rows, std::max<int64_t>(rows, 1)), std::min(chunk_vocab, vocab)};
}

void forward(Head& head, const float* bias, const int32_t* targets, const Shape& s, const grpo_linear_logprob_options& o,
             float* logp, float* entropy, float* lse, float* kept_logits) {
  std::vector<float> tile(static_cast<size_t>(s.chunk_rows * s.chunk_vocab));  // [chunk_rows, chunk_vocab]
  std::vector<RowOutput> rows;
  computed_rows(head, bias, targets, s, o, tile.data(), kept_logits, rows);
  for (int64_t r = 0; r < s.rows; ++r) {
    logp[r] = rows[r].logp;
    if (entropy) entropy[r] = rows[r].entropy;
    if (lse) lse[r] = rows[r].max + rows[r].log_sum;
  }
}

void backward(Head& head, const float* bias, const int32_t* targets, const Shape& s, const grpo_linear_logprob_options& o,
              const Gradients& g, bool accumulate, const SavedStats& saved) {
  if (!accumulate) {
    std::fill(g.hidden, g.hidden + s.rows * s.hidden, 0.0f);
    if (g.weight) std::fill(g.weight, g.weight + s.vocab * s.hidden, 0.0f);
    if (g.bias) std::fill(g.bias, g.bias + s.vocab, 0.0f);
  }
  std::vector<float> tile(static_cast<size_t>(s.chunk_rows * s.chunk_vocab));  // [chunk_rows, chunk_vocab]
  std::vector<RowOutput> rows;
  if (saved.lse) saved_rows(saved, s.rows, rows);
  else computed_rows(head, bias, targets, s, o, tile.data(), nullptr, rows);
  // Each row's gradient sums its vocab tiles in order, each weight row's its row blocks: the bits of any tile order.
  for_each_tile(s, [&](int64_t r0, int64_t n, int64_t v0, int64_t cols) {
    if (!saved.logits) compute_tile(head, bias, r0, n, v0, cols, tile.data());
    backward_tile(head, targets, o, s, r0, n, v0, cols, rows, saved.logits, tile.data(), g);
  });
}

namespace {

// float32 hidden and weight: the float32 GEMM.
class Float32Head final : public Head {
 public:
  Float32Head(const float* hidden, const float* weight, const Shape& s) : hidden_(hidden), weight_(weight), s_(s) {}

  // The weight slice of vocab tile v0 is packed on its first row block and kept for the others.
  void logits(int64_t r0, int64_t n, int64_t v0, int64_t cols, float* tile) override {
    const int64_t H = s_.hidden;
    if (v0 != packed_v0_ || cols != packed_.N) repack_b(true, cols, H, weight_ + v0 * H, H, packed_), packed_v0_ = v0;
    gemm_packed(n, hidden_ + r0 * H, H, packed_, tile, cols);
  }

  // With kept logits (no tile recomputed) the weight slice of vocab tile v0 is packed once as op(B) of the
  // grad_hidden product, on its first row block. A backward that recomputes the tiles holds the slice packed for the
  // logits already (4 MB at the default tile): its grad_hidden product packs per call, keeping the workspace ≤ 16 MB.
  void multiply_out(int64_t r0, int64_t n, int64_t v0, int64_t cols, float* tile, float* grad_hidden,
                    float* grad_weight) override {
    const int64_t H = s_.hidden;
    if (packed_v0_ == v0) {
      gemm(false, false, n, H, cols, 1.0f, tile, cols, weight_ + v0 * H, H, 1.0f, grad_hidden + r0 * H, H);
    } else {
      if (v0 != slice_v0_ || cols != slice_.K) repack_b(false, H, cols, weight_ + v0 * H, H, slice_), slice_v0_ = v0;
      gemm_packed(false, n, tile, cols, slice_, 1.0f, grad_hidden + r0 * H, H);
    }
    if (grad_weight) gemm(true, false, cols, H, n, 1.0f, tile, cols, hidden_ + r0 * H, H, 1.0f, grad_weight + v0 * H, H);
  }

 private:
  const float *hidden_, *weight_;
  Shape s_;
  PackedB packed_;  // weight[packed_v0_ .. + packed_.N) as op(B) of the logits product
  int64_t packed_v0_ = -1;
  PackedB slice_;  // weight[slice_v0_ .. + slice_.K) as op(B) of the grad_hidden product
  int64_t slice_v0_ = -1;
};

}  // namespace

void backward_frozen_weight(const float* hidden, const float* weight, const int32_t* targets, int64_t rows, int64_t hidden_size,
                            int64_t vocab, const grpo_linear_logprob_options& o, const SavedStats& saved,
                            const float* grad_logp, const float* grad_entropy, float* grad_hidden) {
  linear_logprob_checks::all_finite(grad_logp, rows, "grad_logp");
  linear_logprob_checks::all_finite(grad_entropy, grad_entropy ? rows : 0, "grad_entropy");
  if (saved.lse) linear_logprob_checks::saved_stats(targets, rows, o.ignore_index, saved.lse, saved.entropy, grad_entropy);
  const Shape s = make_shape(rows, hidden_size, vocab, o);
  Float32Head head(hidden, weight, s);
  backward(head, nullptr, targets, s, o, {grad_logp, grad_entropy, grad_hidden, nullptr, nullptr}, true, saved);
}

}  // namespace grpo::linear_logprob

extern "C" grpo_status grpo_linear_logprob_forward(const float* hidden, const float* weight, const float* bias,
                                        const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                        const grpo_linear_logprob_options* options, float* logp, float* entropy,
                                        float* lse) {
  return grpo::linear_logprob::forward_entry<grpo::linear_logprob::Float32Head>(hidden, weight, bias, targets, rows, hidden_size,
                                                                           vocab, options, logp, entropy, lse);
}

extern "C" grpo_status grpo_linear_logprob_backward(const float* hidden, const float* weight, const float* bias,
                                         const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                         const grpo_linear_logprob_options* options, const float* grad_logp,
                                         const float* grad_entropy, float* grad_hidden, float* grad_weight,
                                         float* grad_bias, int accumulate) {
  return grpo::linear_logprob::backward_entry<grpo::linear_logprob::Float32Head>(
      hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp, grad_entropy, grad_hidden, grad_weight,
      grad_bias, accumulate);
}

extern "C" grpo_status grpo_linear_logprob_backward_saved(const float* hidden, const float* weight, const float* bias,
                                               const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                               const grpo_linear_logprob_options* options, const float* lse,
                                               const float* entropy, const float* grad_logp, const float* grad_entropy,
                                               float* grad_hidden, float* grad_weight, float* grad_bias, int accumulate) {
  const grpo::linear_logprob::SavedStats saved{lse, entropy};
  return grpo::linear_logprob::backward_entry<grpo::linear_logprob::Float32Head>(
      hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp, grad_entropy, grad_hidden, grad_weight,
      grad_bias, accumulate, &saved);
}

extern "C" grpo_status grpo_linear_logprob_forward_logits(const float* hidden, const float* weight, const float* bias,
                                               const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                               const grpo_linear_logprob_options* options, float* logp, float* entropy,
                                               float* lse, float* logits) {
  return grpo::linear_logprob::forward_entry<grpo::linear_logprob::Float32Head>(hidden, weight, bias, targets, rows, hidden_size,
                                                                           vocab, options, logp, entropy, lse, logits);
}

extern "C" grpo_status grpo_linear_logprob_backward_logits(
    const float* hidden, const float* weight, const float* bias, const int32_t* targets, int64_t rows,
    int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options, const float* lse, const float* entropy,
    const float* logits, const float* grad_logp, const float* grad_entropy, float* grad_hidden, float* grad_weight,
    float* grad_bias, int accumulate) {
  const grpo::linear_logprob::SavedStats saved{lse, entropy};
  return grpo::linear_logprob::backward_entry<grpo::linear_logprob::Float32Head>(
      hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp, grad_entropy, grad_hidden, grad_weight,
      grad_bias, accumulate, &saved, logits);
}
