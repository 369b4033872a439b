// The fused LM head's kept logits (grpo_linear_logprob_forward_logits / _backward_logits, float32 and bfloat16
// inputs): the forward's outputs are its plain forward's bits and the logits are hidden · weightᵀ + bias; the backward
// that reads them gives the saved backward's bits (bias, entropy gradient, accumulate, ignored rows, ragged tiles,
// and a logits array over 16 MB, written with non-temporal stores); bad logits and null pointers get their status.
#include <cmath>
#include <cstring>
#include <vector>

#include "check.h"
#include "gemm/gemm_reference.h"
#include "grpo/logprob.h"
#include "runtime/bf16.h"

using grpo::test::close;
using grpo::test::random_floats;

namespace {

template <typename T> struct Abi;
template <> struct Abi<float> {
  static constexpr auto forward = &grpo_linear_logprob_forward;
  static constexpr auto forward_logits = &grpo_linear_logprob_forward_logits;
  static constexpr auto backward_saved = &grpo_linear_logprob_backward_saved;
  static constexpr auto backward_logits = &grpo_linear_logprob_backward_logits;
  static float store(float x) { return x; }
  static float widen(float x) { return x; }
};
template <> struct Abi<uint16_t> {
  static constexpr auto forward = &grpo_linear_logprob_forward_bf16;
  static constexpr auto forward_logits = &grpo_linear_logprob_forward_logits_bf16;
  static constexpr auto backward_saved = &grpo_linear_logprob_backward_saved_bf16;
  static constexpr auto backward_logits = &grpo_linear_logprob_backward_logits_bf16;
  static uint16_t store(float x) { return grpo::bf16::round(x); }
  static float widen(uint16_t x) { return grpo::bf16::widen(x); }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

template <typename T> std::vector<T> stored(const std::vector<float>& x) {
  std::vector<T> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = Abi<T>::store(x[i]);
  return out;
}

template <typename T> std::vector<float> widened(const std::vector<T>& x) {
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = Abi<T>::widen(x[i]);
  return out;
}

template <typename T>
void kept_logits_match(int64_t rows, int64_t hidden, int64_t vocab, int64_t chunk_rows, int64_t chunk_vocab, uint32_t seed) {
  using A = Abi<T>;
  const std::vector<T> h = stored<T>(random_floats(rows * hidden, 1.0f, seed));              // [rows, hidden]
  const std::vector<T> w = stored<T>(random_floats(vocab * hidden, 0.5f, seed + 1));         // [vocab, hidden]
  const std::vector<float> bias = random_floats(vocab, 0.1f, seed + 2);                      // [vocab]
  std::vector<int32_t> targets(rows);
  for (int64_t t = 0; t < rows; ++t) targets[t] = t % 4 == 1 ? -100 : static_cast<int32_t>((t * 7919) % vocab);
  const grpo_linear_logprob_options o{0.8f, -100, chunk_rows, chunk_vocab};
  std::vector<float> logp(rows), entropy(rows), lse(rows), k_logp(rows), k_entropy(rows), k_lse(rows);
  std::vector<float> logits(rows * vocab);  // [rows, vocab]
  CHECK(A::forward(h.data(), w.data(), bias.data(), targets.data(), rows, hidden, vocab, &o, logp.data(), entropy.data(),
                   lse.data()) == GRPO_OK);
  CHECK(A::forward_logits(h.data(), w.data(), bias.data(), targets.data(), rows, hidden, vocab, &o, k_logp.data(),
                          k_entropy.data(), k_lse.data(), logits.data()) == GRPO_OK);
  CHECK(same_bits(logp, k_logp) && same_bits(entropy, k_entropy) && same_bits(lse, k_lse));
  std::vector<float> ref(rows * vocab);  // [rows, vocab] on the widened inputs
  const std::vector<float> wh = widened(h), ww = widened(w);
  grpo::gemm_reference(false, true, rows, vocab, hidden, 1.0f, wh.data(), hidden, ww.data(), hidden, 0.0f, ref.data(), vocab);
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t v = 0; v < vocab; ++v) ref[t * vocab + v] += bias[v];
  close("kept logits", logits.data(), ref.data(), ref.size(), 1e-4, 1e-4);

  const std::vector<float> g_logp = random_floats(rows, 1.0f, seed + 3), g_entropy = random_floats(rows, 0.5f, seed + 4);
  std::vector<float> gh(rows * hidden, 0.5f), gw(vocab * hidden, -0.25f), gb(vocab, 1.0f);  // accumulated onto
  std::vector<float> kh = gh, kw = gw, kb = gb;
  CHECK(A::backward_saved(h.data(), w.data(), bias.data(), targets.data(), rows, hidden, vocab, &o, lse.data(),
                          entropy.data(), g_logp.data(), g_entropy.data(), gh.data(), gw.data(), gb.data(), 1) == GRPO_OK);
  CHECK(A::backward_logits(h.data(), w.data(), bias.data(), targets.data(), rows, hidden, vocab, &o, lse.data(),
                           entropy.data(), logits.data(), g_logp.data(), g_entropy.data(), kh.data(), kw.data(), kb.data(),
                           1) == GRPO_OK);
  CHECK(same_bits(gh, kh) && same_bits(gw, kw) && same_bits(gb, kb));

  // Without the entropy gradient or grad_bias, overwriting: the same bits again.
  CHECK(A::backward_saved(h.data(), w.data(), bias.data(), targets.data(), rows, hidden, vocab, &o, lse.data(), nullptr,
                          g_logp.data(), nullptr, gh.data(), gw.data(), nullptr, 0) == GRPO_OK);
  CHECK(A::backward_logits(h.data(), w.data(), bias.data(), targets.data(), rows, hidden, vocab, &o, lse.data(), nullptr,
                           logits.data(), g_logp.data(), nullptr, kh.data(), kw.data(), nullptr, 0) == GRPO_OK);
  CHECK(same_bits(gh, kh) && same_bits(gw, kw));
}

// Poisoned logits: a counted row fails with its row named, an ignored row is not read; null logits are rejected.
void bad_kept_logits() {
  const int64_t rows = 4, hidden = 3, vocab = 10;
  const std::vector<float> h = random_floats(rows * hidden, 1.0f, 51), w = random_floats(vocab * hidden, 1.0f, 52);
  const std::vector<int32_t> targets = {2, -100, 9, 0};
  const grpo_linear_logprob_options o{1.0f, -100, 3, 4};
  std::vector<float> logp(rows), lse(rows), logits(rows * vocab), g(rows, 1.0f), gh(rows * hidden), gw(vocab * hidden);
  CHECK(grpo_linear_logprob_forward_logits(h.data(), w.data(), nullptr, targets.data(), rows, hidden, vocab, &o, logp.data(),
                                           nullptr, lse.data(), nullptr) == GRPO_ERR_INVALID_ARGUMENT);
  CHECK(grpo_linear_logprob_forward_logits(h.data(), w.data(), nullptr, targets.data(), rows, hidden, vocab, &o, logp.data(),
                                           nullptr, lse.data(), logits.data()) == GRPO_OK);
  const auto backward = [&](const float* kept) {
    return grpo_linear_logprob_backward_logits(h.data(), w.data(), nullptr, targets.data(), rows, hidden, vocab, &o,
                                               lse.data(), nullptr, kept, g.data(), nullptr, gh.data(), gw.data(), nullptr, 0);
  };
  CHECK(backward(nullptr) == GRPO_ERR_INVALID_ARGUMENT);
  for (float bad : {NAN, INFINITY}) {
    std::vector<float> poisoned = logits;
    poisoned[1 * vocab + 5] = bad;  // row 1 is ignored
    CHECK(backward(poisoned.data()) == GRPO_OK);
    poisoned[2 * vocab + 7] = bad;
    CHECK(backward(poisoned.data()) == GRPO_ERR_NON_FINITE);
    CHECK(std::strstr(grpo_last_error(), "logits row 2") != nullptr);
  }
}

}  // namespace

int main() {
  kept_logits_match<float>(9, 24, 50, 4, 16, 1);
  kept_logits_match<float>(33, 64, 300, 0, 0, 2);
  kept_logits_match<float>(17, 19, 131, 6, 40, 3);   // ragged tiles on both axes
  kept_logits_match<float>(130, 8, 32771, 0, 0, 4);  // 17 MB of logits: streamed
  kept_logits_match<uint16_t>(17, 40, 1037, 5, 384, 5);
  kept_logits_match<uint16_t>(130, 8, 32771, 0, 0, 6);
  bad_kept_logits();
  return grpo::test::report("test_linear_kept_logits");
}
