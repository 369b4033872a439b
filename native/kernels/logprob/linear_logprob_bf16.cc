// The fused LM head with bfloat16 hidden and weight (grpo_linear_logprob_*_bf16): the tile driver of
// linear_logprob.cc over a Head that widens bf16 to float32 a slice at a time and multiplies with
// grpo::gemm_bf16 (vdpbf16ps where the CPU has AVX512_BF16, the float32 GEMM elsewhere; both give the
// exact bf16 × bf16 products, summed in float32). Widened copies: the row block of hidden and
// a slice of at most 8 MB of weight rows, never the whole weight.
#include <algorithm>
#include <vector>

#include "gemm/gemm_bf16.h"
#include "linear_logprob.h"
#include "runtime/bf16.h"
#include "runtime/error.h"
#include "runtime/simd.h"
#include "runtime/thread_pool.h"

namespace grpo::linear_logprob {

namespace {

constexpr int64_t kWeightSliceFloats = int64_t{1} << 21;  // weight widened at a time: 8 MB of floats
constexpr int64_t kMinWeightSlice = 512;                   // rows, even when H > 4096

// Weight rows widened at a time: as many as fit 8 MB (4096 at H = 512, a whole default vocab tile, so that each
// tile is one GEMM call and hidden is packed once per tile), at least kMinWeightSlice.
int64_t weight_slice(const Shape& s) {
  return std::min(std::max(kWeightSliceFloats / s.hidden, kMinWeightSlice), s.vocab);
}
constexpr int64_t kWidenGrain = 1 << 16;

GRPO_CLONES void widen_span(const uint16_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16::widen(src[i]);
}

GRPO_CLONES void round_span(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = bf16::round_float(x[i]);
}

// dst [n] = float(src [n]), in parallel blocks.
void widen(const uint16_t* src, int64_t n, float* dst) {
  parallel_for(n, kWidenGrain, [&](int64_t begin, int64_t end) { widen_span(src + begin, end - begin, dst + begin); });
}

void round_to_bf16(float* x, int64_t n) {
  parallel_for(n, kWidenGrain, [&](int64_t begin, int64_t end) { round_span(x + begin, end - begin); });
}

class Bf16Head final : public Head {
 public:
  Bf16Head(const uint16_t* hidden, const uint16_t* weight, const Shape& s)
      : hidden_(hidden), weight_(weight), s_(s), hidden_rows_(s.chunk_rows * s.hidden),
        slice_(weight_slice(s)), weight_rows_(slice_ * s.hidden) {}

  void logits(int64_t r0, int64_t n, int64_t v0, int64_t cols, float* tile) override {
    const int64_t H = s_.hidden;
    const float* h = hidden_rows(r0, n);
    for (int64_t c0 = 0; c0 < cols; c0 += slice_) {
      const int64_t m = std::min(slice_, cols - c0);
      gemm_bf16(false, true, n, m, H, 1.0f, h, H, weight_rows(v0 + c0, m), H, 0.0f, tile + c0, cols);
    }
  }

  // The tile is rounded to bfloat16 first (grpo/logprob.h), as a bf16 tensor-core GEMM would need it.
  void multiply_out(int64_t r0, int64_t n, int64_t v0, int64_t cols, float* tile, float* grad_hidden,
                    float* grad_weight) override {
    const int64_t H = s_.hidden;
    round_to_bf16(tile, n * cols);
    for (int64_t c0 = 0; c0 < cols; c0 += slice_) {
      const int64_t m = std::min(slice_, cols - c0);
      gemm_bf16(false, false, n, H, m, 1.0f, tile + c0, cols, weight_rows(v0 + c0, m), H, 1.0f, grad_hidden + r0 * H, H);
    }
    gemm_bf16(true, false, cols, H, n, 1.0f, tile, cols, hidden_rows(r0, n), H, 1.0f, grad_weight + v0 * H, H);
  }

 private:
  // hidden[r0 .. r0 + n) as floats [n, H], widened once per row block.
  const float* hidden_rows(int64_t r0, int64_t n) {
    if (r0 != widened_r0_) widen(hidden_ + r0 * s_.hidden, n * s_.hidden, hidden_rows_.data());
    widened_r0_ = r0;
    return hidden_rows_.data();
  }

  // weight[v0 .. v0 + m) as floats [m, H], m <= slice_.
  const float* weight_rows(int64_t v0, int64_t m) {
    widen(weight_ + v0 * s_.hidden, m * s_.hidden, weight_rows_.data());
    return weight_rows_.data();
  }

  const uint16_t *hidden_, *weight_;
  Shape s_;
  std::vector<float> hidden_rows_;  // [chunk_rows, H]
  int64_t slice_;                   // weight rows per widened slice
  std::vector<float> weight_rows_;  // [slice_, H]
  int64_t widened_r0_ = -1;
};

}  // namespace

}  // namespace grpo::linear_logprob

extern "C" grpo_status grpo_linear_logprob_forward_bf16(const uint16_t* hidden, const uint16_t* weight, const float* bias,
                                        const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                        const grpo_linear_logprob_options* options, float* logp, float* entropy,
                                        float* lse) {
  return grpo::linear_logprob::forward_entry<grpo::linear_logprob::Bf16Head>(hidden, weight, bias, targets, rows, hidden_size,
                                                                           vocab, options, logp, entropy, lse);
}

extern "C" grpo_status grpo_linear_logprob_backward_bf16(const uint16_t* hidden, const uint16_t* weight, const float* bias,
                                         const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                         const grpo_linear_logprob_options* options, const float* grad_logp,
                                         const float* grad_entropy, float* grad_hidden, float* grad_weight,
                                         float* grad_bias, int accumulate) {
  return grpo::linear_logprob::backward_entry<grpo::linear_logprob::Bf16Head>(
      hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp, grad_entropy, grad_hidden, grad_weight,
      grad_bias, accumulate);
}

extern "C" grpo_status grpo_linear_logprob_backward_saved_bf16(
    const uint16_t* hidden, const uint16_t* weight, const float* bias, const int32_t* targets, int64_t rows,
    int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options, const float* lse, const float* entropy,
    const float* grad_logp, const float* grad_entropy, float* grad_hidden, float* grad_weight, float* grad_bias,
    int accumulate) {
  const grpo::linear_logprob::SavedStats saved{lse, entropy};
  return grpo::linear_logprob::backward_entry<grpo::linear_logprob::Bf16Head>(
      hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp, grad_entropy, grad_hidden, grad_weight,
      grad_bias, accumulate, &saved);
}

extern "C" grpo_status grpo_linear_logprob_forward_logits_bf16(const uint16_t* hidden, const uint16_t* weight, const float* bias,
                                               const int32_t* targets, int64_t rows, int64_t hidden_size, int64_t vocab,
                                               const grpo_linear_logprob_options* options, float* logp, float* entropy,
                                               float* lse, float* logits) {
  return grpo::linear_logprob::forward_entry<grpo::linear_logprob::Bf16Head>(hidden, weight, bias, targets, rows, hidden_size,
                                                                           vocab, options, logp, entropy, lse, logits);
}

extern "C" grpo_status grpo_linear_logprob_backward_logits_bf16(
    const uint16_t* hidden, const uint16_t* weight, const float* bias, const int32_t* targets, int64_t rows,
    int64_t hidden_size, int64_t vocab, const grpo_linear_logprob_options* options, const float* lse, const float* entropy,
    const float* logits, const float* grad_logp, const float* grad_entropy, float* grad_hidden, float* grad_weight,
    float* grad_bias, int accumulate) {
  const grpo::linear_logprob::SavedStats saved{lse, entropy};
  return grpo::linear_logprob::backward_entry<grpo::linear_logprob::Bf16Head>(
      hidden, weight, bias, targets, rows, hidden_size, vocab, options, grad_logp, grad_entropy, grad_hidden, grad_weight,
      grad_bias, accumulate, &saved, logits);
}
