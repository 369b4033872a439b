// Log-prob kernels against the double-precision reference, plain and fused, with adversarial rows.
#include <cmath>
#include <cstring>
#include <vector>

#include "check.h"
#include "gemm/gemm_reference.h"
#include "grpo/logprob.h"
#include "logprob_reference.h"
#include "softmax_row.h"

using grpo::test::close;
using grpo::test::random_floats;

namespace {

void plain_matches_reference(int64_t rows, int64_t vocab, float scale, float temperature, uint32_t seed) {
  std::vector<float> logits = random_floats(rows * vocab, scale, seed);  // [rows, vocab]
  std::vector<int32_t> targets(rows);
  for (int64_t t = 0; t < rows; ++t) targets[t] = t % 5 == 4 ? -100 : static_cast<int32_t>((t * 7919) % vocab);
  if (rows > 1 && vocab > 2) logits[vocab + 1] = -INFINITY;  // a masked entry that is not the target
  grpo_logprob_options options{temperature, -100};
  std::vector<float> logp(rows), entropy(rows), grad(rows * vocab);
  std::vector<double> ref_logp(rows), ref_entropy(rows), ref_grad(rows * vocab);
  CHECK(grpo_logprob_forward(logits.data(), targets.data(), rows, vocab, &options, logp.data(), entropy.data()) == GRPO_OK);
  grpo::reference::logprob_forward(logits.data(), targets.data(), rows, vocab, temperature, -100, ref_logp.data(),
                                   ref_entropy.data());
  close("logp", logp.data(), ref_logp.data(), rows, 2e-5, 2e-5);
  close("entropy", entropy.data(), ref_entropy.data(), rows, 2e-5, 2e-5);
  std::vector<float> g_logp = random_floats(rows, 1.0f, seed + 1), g_entropy = random_floats(rows, 1.0f, seed + 2);
  CHECK(grpo_logprob_backward(logits.data(), targets.data(), rows, vocab, &options, g_logp.data(), g_entropy.data(),
                              grad.data()) == GRPO_OK);
  grpo::reference::logprob_backward(logits.data(), targets.data(), rows, vocab, temperature, -100, g_logp.data(),
                                    g_entropy.data(), ref_grad.data());
  close("grad_logits", grad.data(), ref_grad.data(), grad.size(), 1e-6, 1e-4);

  // Without entropy: the forward skips Σ e·d, the backward takes one exp per logit (its own code paths).
  std::vector<float> logp_only(rows);
  CHECK(grpo_logprob_forward(logits.data(), targets.data(), rows, vocab, &options, logp_only.data(), nullptr) == GRPO_OK);
  close("logp without entropy", logp_only.data(), ref_logp.data(), rows, 2e-5, 2e-5);
  CHECK(grpo_logprob_backward(logits.data(), targets.data(), rows, vocab, &options, g_logp.data(), nullptr, grad.data()) ==
        GRPO_OK);
  grpo::reference::logprob_backward(logits.data(), targets.data(), rows, vocab, temperature, -100, g_logp.data(), nullptr,
                                    ref_grad.data());
  close("grad_logits without entropy", grad.data(), ref_grad.data(), grad.size(), 1e-6, 1e-4);
  CHECK(rows == 1 || vocab <= 2 || grad[vocab + 1] == 0.0f);  // the masked entry's gradient is exactly 0
  std::vector<float> in_place = logits;  // out: logits gives the same bits
  CHECK(grpo_logprob_backward(in_place.data(), targets.data(), rows, vocab, &options, g_logp.data(), nullptr,
                              in_place.data()) == GRPO_OK);
  CHECK(std::memcmp(in_place.data(), grad.data(), grad.size() * sizeof(float)) == 0);
}

// Rows of more than one 2048-logit span whose spans are masked, hold NaN or +Infinity among −Infinity, or
// sit on the −87.3 edge of the exp: with and without entropy, forward and backward.
void adversarial_spans() {
  const int64_t vocab = 5000;  // spans [0, 2048), [2048, 4096), [4096, 5000)
  grpo_logprob_options options{1.0f, -100};
  std::vector<float> row(vocab, -INFINITY);
  for (int64_t j = 4096; j < vocab; ++j) row[j] = -87.5f + 0.4f * static_cast<float>(j - 4096) / 904.0f;  // [-87.5, -87.1]
  row[100] = 0.0f;  // the max: e^(x − max) crosses −87.3 in the last span
  const int32_t target = 4500;
  std::vector<float> logp(1), entropy(1), grad(vocab);
  std::vector<double> ref_logp(1), ref_entropy(1), ref_grad(vocab);
  const float g_logp = 0.75f;
  grpo::reference::logprob_forward(row.data(), &target, 1, vocab, 1.0, -100, ref_logp.data(), ref_entropy.data());
  grpo::reference::logprob_backward(row.data(), &target, 1, vocab, 1.0, -100, &g_logp, nullptr, ref_grad.data());
  for (float* h : {entropy.data(), static_cast<float*>(nullptr)}) {
    CHECK(grpo_logprob_forward(row.data(), &target, 1, vocab, &options, logp.data(), h) == GRPO_OK);
    close("edge logp", logp.data(), ref_logp.data(), 1, 2e-5, 2e-5);
  }
  close("edge entropy", entropy.data(), ref_entropy.data(), 1, 2e-5, 2e-5);
  CHECK(grpo_logprob_backward(row.data(), &target, 1, vocab, &options, &g_logp, nullptr, grad.data()) == GRPO_OK);
  close("edge grad", grad.data(), ref_grad.data(), vocab, 1e-6, 1e-4);
  bool masked_zero = true;
  for (int64_t j = 0; j < vocab; ++j) masked_zero = masked_zero && (row[j] != -INFINITY || grad[j] == 0.0f);
  CHECK(masked_zero);

  for (float bad : {NAN, -NAN, INFINITY}) {
    for (int64_t at : {int64_t{3000}, int64_t{100}, int64_t{4999}}) {
      std::vector<float> x = row;
      x[at] = bad;  // at 3000: alone in a span of −Infinity
      for (float* h : {entropy.data(), static_cast<float*>(nullptr)})
        CHECK(grpo_logprob_forward(x.data(), &target, 1, vocab, &options, logp.data(), h) == GRPO_ERR_NON_FINITE);
      CHECK(grpo_logprob_backward(x.data(), &target, 1, vocab, &options, &g_logp, nullptr, grad.data()) == GRPO_ERR_NON_FINITE);
    }
  }
  std::vector<float> masked(vocab, -INFINITY);
  CHECK(grpo_logprob_forward(masked.data(), &target, 1, vocab, &options, logp.data(), nullptr) == GRPO_ERR_VALUE_RANGE);
  CHECK(grpo_logprob_backward(masked.data(), &target, 1, vocab, &options, &g_logp, nullptr, grad.data()) == GRPO_ERR_VALUE_RANGE);
}

void fused_matches_plain(int64_t rows, int64_t hidden, int64_t vocab, int64_t chunk_rows, int64_t chunk_vocab) {
  std::vector<float> h = random_floats(rows * hidden, 1.0f, 11), w = random_floats(vocab * hidden, 0.5f, 12);
  std::vector<float> bias = random_floats(vocab, 0.1f, 13);
  std::vector<int32_t> targets(rows);
  for (int64_t t = 0; t < rows; ++t) targets[t] = t == 1 ? -100 : static_cast<int32_t>((t * 31) % vocab);
  std::vector<float> logits(rows * vocab);  // [rows, vocab], materialised only for the comparison
  grpo::gemm_reference(false, true, rows, vocab, hidden, 1.0f, h.data(), hidden, w.data(), hidden, 0.0f, logits.data(), vocab);
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t v = 0; v < vocab; ++v) logits[t * vocab + v] += bias[v];
  grpo_logprob_options plain{0.7f, -100};
  grpo_linear_logprob_options fused{0.7f, -100, chunk_rows, chunk_vocab};
  std::vector<float> logp(rows), entropy(rows), f_logp(rows), f_entropy(rows), lse(rows);
  CHECK(grpo_logprob_forward(logits.data(), targets.data(), rows, vocab, &plain, logp.data(), entropy.data()) == GRPO_OK);
  CHECK(grpo_linear_logprob_forward(h.data(), w.data(), bias.data(), targets.data(), rows, hidden, vocab, &fused,
                                    f_logp.data(), f_entropy.data(), lse.data()) == GRPO_OK);
  close("fused logp", f_logp.data(), logp.data(), rows, 1e-4, 1e-4);
  close("fused entropy", f_entropy.data(), entropy.data(), rows, 1e-4, 1e-4);

  std::vector<float> g_logp = random_floats(rows, 1.0f, 14), g_entropy = random_floats(rows, 1.0f, 15);
  std::vector<float> grad_logits(rows * vocab), ref_gh(rows * hidden), ref_gw(vocab * hidden), ref_gb(vocab, 0.0f);
  CHECK(grpo_logprob_backward(logits.data(), targets.data(), rows, vocab, &plain, g_logp.data(), g_entropy.data(),
                              grad_logits.data()) == GRPO_OK);
  grpo::gemm_reference(false, false, rows, hidden, vocab, 1.0f, grad_logits.data(), vocab, w.data(), hidden, 0.0f,
                       ref_gh.data(), hidden);
  grpo::gemm_reference(true, false, vocab, hidden, rows, 1.0f, grad_logits.data(), vocab, h.data(), hidden, 0.0f,
                       ref_gw.data(), hidden);
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t v = 0; v < vocab; ++v) ref_gb[v] += grad_logits[t * vocab + v];
  std::vector<float> gh(rows * hidden), gw(vocab * hidden), gb(vocab);
  CHECK(grpo_linear_logprob_backward(h.data(), w.data(), bias.data(), targets.data(), rows, hidden, vocab, &fused,
                                     g_logp.data(), g_entropy.data(), gh.data(), gw.data(), gb.data(), 0) == GRPO_OK);
  close("grad_hidden", gh.data(), ref_gh.data(), gh.size(), 1e-4, 1e-3);
  close("grad_weight", gw.data(), ref_gw.data(), gw.size(), 1e-4, 1e-3);
  close("grad_bias", gb.data(), ref_gb.data(), gb.size(), 1e-4, 1e-3);

  // The forward's lse and entropy reused (no statistics pass), accumulated onto a first gradient.
  std::vector<float> sh(rows * hidden, 0.5f), sw(vocab * hidden, -0.25f), sb(vocab, 1.0f);
  CHECK(grpo_linear_logprob_backward_saved(h.data(), w.data(), bias.data(), targets.data(), rows, hidden, vocab, &fused,
                                           lse.data(), f_entropy.data(), g_logp.data(), g_entropy.data(), sh.data(),
                                           sw.data(), sb.data(), 1) == GRPO_OK);
  for (size_t i = 0; i < ref_gh.size(); ++i) ref_gh[i] += 0.5;
  for (size_t i = 0; i < ref_gw.size(); ++i) ref_gw[i] -= 0.25;
  for (size_t i = 0; i < ref_gb.size(); ++i) ref_gb[i] += 1.0;
  close("saved grad_hidden", sh.data(), ref_gh.data(), sh.size(), 1e-4, 1e-3);
  close("saved grad_weight", sw.data(), ref_gw.data(), sw.size(), 1e-4, 1e-3);
  close("saved grad_bias", sb.data(), ref_gb.data(), sb.size(), 1e-4, 1e-3);
}

// The saved-statistics backward at large logit magnitudes (|logit| up to ~500, near one-hot rows), against the float64
// reference over the materialised logits; and the checks of its extra inputs. Its log p = x/temperature − lse carries
// lse's float32 rounding, ulp(|lse|) / 2 absolute (3e-5 here), which bounds the tolerance.
void saved_backward_large_magnitudes() {
  const int64_t rows = 5, hidden = 7, vocab = 37;
  std::vector<float> h = random_floats(rows * hidden, 10.0f, 21), w = random_floats(vocab * hidden, 10.0f, 22);
  std::vector<int32_t> targets = {3, -100, 36, 0, 17};
  std::vector<float> logits(rows * vocab);  // [rows, vocab]
  grpo::gemm_reference(false, true, rows, vocab, hidden, 1.0f, h.data(), hidden, w.data(), hidden, 0.0f, logits.data(), vocab);
  grpo_linear_logprob_options fused{1.5f, -100, 2, 5};
  std::vector<float> logp(rows), lse(rows), g_logp = random_floats(rows, 1.0f, 23);
  CHECK(grpo_linear_logprob_forward(h.data(), w.data(), nullptr, targets.data(), rows, hidden, vocab, &fused, logp.data(),
                                    nullptr, lse.data()) == GRPO_OK);
  std::vector<float> grad_logits(rows * vocab), gh(rows * hidden), gw(vocab * hidden);
  std::vector<float> ref_gh(rows * hidden), ref_gw(vocab * hidden);
  std::vector<double> ref_grad(rows * vocab);
  grpo::reference::logprob_backward(logits.data(), targets.data(), rows, vocab, 1.5f, -100, g_logp.data(), nullptr,
                                    ref_grad.data());
  for (size_t i = 0; i < ref_grad.size(); ++i) grad_logits[i] = static_cast<float>(ref_grad[i]);
  grpo::gemm_reference(false, false, rows, hidden, vocab, 1.0f, grad_logits.data(), vocab, w.data(), hidden, 0.0f,
                       ref_gh.data(), hidden);
  grpo::gemm_reference(true, false, vocab, hidden, rows, 1.0f, grad_logits.data(), vocab, h.data(), hidden, 0.0f,
                       ref_gw.data(), hidden);
  CHECK(grpo_linear_logprob_backward_saved(h.data(), w.data(), nullptr, targets.data(), rows, hidden, vocab, &fused,
                                           lse.data(), nullptr, g_logp.data(), nullptr, gh.data(), gw.data(), nullptr,
                                           0) == GRPO_OK);
  close("large saved grad_hidden", gh.data(), ref_gh.data(), gh.size(), 1e-3, 1e-3);
  close("large saved grad_weight", gw.data(), ref_gw.data(), gw.size(), 1e-3, 1e-3);

  CHECK(grpo_linear_logprob_backward_saved(h.data(), w.data(), nullptr, targets.data(), rows, hidden, vocab, &fused,
                                           nullptr, nullptr, g_logp.data(), nullptr, gh.data(), gw.data(), nullptr,
                                           0) == GRPO_ERR_INVALID_ARGUMENT);
  CHECK(grpo_linear_logprob_backward_saved(h.data(), w.data(), nullptr, targets.data(), rows, hidden, vocab, &fused,
                                           lse.data(), nullptr, g_logp.data(), g_logp.data(), gh.data(), gw.data(),
                                           nullptr, 0) == GRPO_ERR_INVALID_ARGUMENT);
  lse[1] = NAN;  // an ignored row is not read
  CHECK(grpo_linear_logprob_backward_saved(h.data(), w.data(), nullptr, targets.data(), rows, hidden, vocab, &fused,
                                           lse.data(), nullptr, g_logp.data(), nullptr, gh.data(), gw.data(), nullptr,
                                           0) == GRPO_OK);
  lse[2] = INFINITY;
  CHECK(grpo_linear_logprob_backward_saved(h.data(), w.data(), nullptr, targets.data(), rows, hidden, vocab, &fused,
                                           lse.data(), nullptr, g_logp.data(), nullptr, gh.data(), gw.data(), nullptr,
                                           0) == GRPO_ERR_NON_FINITE);
  CHECK(std::strstr(grpo_last_error(), "lse[2]") != nullptr);
}

void bad_inputs_return_status() {
  std::vector<float> logits = {0.0f, 1.0f, NAN, 2.0f};
  std::vector<int32_t> targets = {0, 1};
  std::vector<float> logp(2);
  grpo_logprob_options options{1.0f, -100};
  CHECK(grpo_logprob_forward(logits.data(), targets.data(), 2, 2, &options, logp.data(), nullptr) == GRPO_ERR_NON_FINITE);
  CHECK(std::strstr(grpo_last_error(), "row 1") != nullptr);
  logits[2] = 0.0f;
  targets[1] = 2;
  CHECK(grpo_logprob_forward(logits.data(), targets.data(), 2, 2, &options, logp.data(), nullptr) == GRPO_ERR_INDEX_RANGE);
  targets[1] = 1;
  options.temperature = 0.0f;
  CHECK(grpo_logprob_forward(logits.data(), targets.data(), 2, 2, &options, logp.data(), nullptr) == GRPO_ERR_VALUE_RANGE);
  CHECK(grpo_logprob_forward(logits.data(), targets.data(), 2, 2, nullptr, logp.data(), nullptr) == GRPO_ERR_INVALID_ARGUMENT);
}

void large_magnitudes_stay_finite() {
  std::vector<float> logits = {1e4f, -1e4f, 9999.0f, -INFINITY};
  std::vector<int32_t> targets = {2};
  std::vector<float> logp(1), entropy(1);
  grpo_logprob_options options{1.0f, -100};
  CHECK(grpo_logprob_forward(logits.data(), targets.data(), 1, 4, &options, logp.data(), entropy.data()) == GRPO_OK);
  CHECK(std::fabs(logp[0] - (-1.3132617f)) < 1e-5f);  // log σ(−1) = −log(1 + e)
  CHECK(std::isfinite(entropy[0]));
}

// The streamed backward (out written by non-temporal stores) gives the cached one's bits: a row whose out is
// not 16-byte aligned and whose length is not a multiple of 4, then a gradient above the streaming threshold
// (16 MB) through the API, with ignored rows, out of place and in place.
void streamed_backward_matches_cached() {
  const int64_t n = 5003;
  std::vector<float> x = random_floats(n, 4.0f, 21), streamed(n + 1), cached(n);
  x[17] = -INFINITY;
  grpo::softmax_row_logp_backward(x.data(), n, 0.8f, 0.7f, 4999, false, cached.data());
  grpo::softmax_row_logp_backward(x.data(), n, 0.8f, 0.7f, 4999, true, streamed.data() + 1);
  CHECK(std::memcmp(streamed.data() + 1, cached.data(), n * sizeof(float)) == 0);

  const int64_t rows = 130, vocab = 32771;  // 17 MB of gradient; odd rows start misaligned
  std::vector<float> logits = random_floats(rows * vocab, 3.0f, 22), grad(rows * vocab, NAN);  // [rows, vocab]
  std::vector<float> g_logp = random_floats(rows, 1.0f, 23);
  std::vector<int32_t> targets(rows);
  for (int64_t t = 0; t < rows; ++t) targets[t] = t % 9 == 4 ? -100 : static_cast<int32_t>((t * 7919) % vocab);
  grpo_logprob_options options{0.9f, -100};
  CHECK(grpo_logprob_backward(logits.data(), targets.data(), rows, vocab, &options, g_logp.data(), nullptr, grad.data()) ==
        GRPO_OK);
  bool same = true;
  std::vector<float> row(vocab);
  for (int64_t t = 0; t < rows; ++t) {
    std::fill(row.begin(), row.end(), 0.0f);
    if (targets[t] >= 0)
      grpo::softmax_row_logp_backward(logits.data() + t * vocab, vocab, 1.0f / 0.9f, g_logp[t], targets[t], false,
                                      row.data());
    same = same && std::memcmp(row.data(), grad.data() + t * vocab, vocab * sizeof(float)) == 0;
  }
  CHECK(same);
  CHECK(grpo_logprob_backward(logits.data(), targets.data(), rows, vocab, &options, g_logp.data(), nullptr,
                              logits.data()) == GRPO_OK);
  CHECK(std::memcmp(logits.data(), grad.data(), grad.size() * sizeof(float)) == 0);
}

// The backward from the forward's lse (and entropy): against the float64 reference with and without the
// entropy gradient, in place with the same bits, streamed (a gradient over 16 MB) and cached; an ignored row
// is never read (NaN there passes), a bad lse, NaN in a counted row's logits, or a missing entropy fail.
void saved_backward(int64_t rows, int64_t vocab, uint32_t seed) {
  std::vector<float> logits = random_floats(rows * vocab, 3.0f, seed);  // [rows, vocab]
  std::vector<int32_t> targets(rows);
  for (int64_t t = 0; t < rows; ++t) targets[t] = t % 7 == 3 ? -100 : static_cast<int32_t>((t * 7919) % vocab);
  logits[3 * vocab + 5] = NAN;  // row 3 is ignored
  logits[vocab + 2] = -INFINITY;
  const float temperature = 0.8f;
  grpo_logprob_options options{temperature, -100};
  std::vector<float> logp(rows), entropy(rows), lse(rows), grad(rows * vocab);
  CHECK(grpo_logprob_forward_lse(logits.data(), targets.data(), rows, vocab, &options, logp.data(), entropy.data(), lse.data()) ==
        GRPO_OK);
  CHECK(lse[3] == 0.0f);
  std::vector<float> g_logp = random_floats(rows, 1.0f, seed + 1), g_entropy = random_floats(rows, 1.0f, seed + 2);
  std::vector<double> ref_grad(rows * vocab);
  for (const float* ge : {static_cast<const float*>(nullptr), static_cast<const float*>(g_entropy.data())}) {
    CHECK(grpo_logprob_backward_saved(logits.data(), targets.data(), rows, vocab, &options, lse.data(),
                                      ge ? entropy.data() : nullptr, g_logp.data(), ge, grad.data()) == GRPO_OK);
    grpo::reference::logprob_backward(logits.data(), targets.data(), rows, vocab, temperature, -100, g_logp.data(), ge,
                                      ref_grad.data());
    close(ge ? "saved grad_logits with entropy" : "saved grad_logits", grad.data(), ref_grad.data(), grad.size(), 1e-6, 1e-4);
  }
  std::vector<float> in_place = logits;
  CHECK(grpo_logprob_backward_saved(in_place.data(), targets.data(), rows, vocab, &options, lse.data(), entropy.data(),
                                    g_logp.data(), g_entropy.data(), in_place.data()) == GRPO_OK);
  CHECK(std::memcmp(in_place.data(), grad.data(), grad.size() * sizeof(float)) == 0);

  CHECK(grpo_logprob_backward_saved(logits.data(), targets.data(), rows, vocab, &options, lse.data(), nullptr, g_logp.data(),
                                    g_entropy.data(), grad.data()) == GRPO_ERR_INVALID_ARGUMENT);
  std::vector<float> bad_lse = lse;
  bad_lse[1] = NAN;
  CHECK(grpo_logprob_backward_saved(logits.data(), targets.data(), rows, vocab, &options, bad_lse.data(), nullptr,
                                    g_logp.data(), nullptr, grad.data()) == GRPO_ERR_NON_FINITE);
  logits[vocab + 7] = INFINITY;  // row 1 is counted
  CHECK(grpo_logprob_backward_saved(logits.data(), targets.data(), rows, vocab, &options, lse.data(), nullptr, g_logp.data(),
                                    nullptr, grad.data()) == GRPO_ERR_NON_FINITE);
  CHECK(std::strstr(grpo_last_error(), "contains NaN or +Infinity") != nullptr);
  for (const float poison : {INFINITY, -NAN})  // in place too, where the gradient overwrites the logits it checks
    for (const float* ge : {static_cast<const float*>(nullptr), static_cast<const float*>(g_entropy.data())}) {
      logits[vocab + 7] = poison;
      in_place = logits;
      CHECK(grpo_logprob_backward_saved(in_place.data(), targets.data(), rows, vocab, &options, lse.data(), entropy.data(),
                                        g_logp.data(), ge, in_place.data()) == GRPO_ERR_NON_FINITE);
    }
}

}  // namespace

int main() {
  plain_matches_reference(1, 1, 1.0f, 1.0f, 1);
  plain_matches_reference(7, 33, 3.0f, 0.7f, 2);
  plain_matches_reference(5, 1000, 10.0f, 1.3f, 3);
  plain_matches_reference(3, 151936, 2.0f, 1.0f, 4);
  fused_matches_plain(9, 24, 50, 4, 16);
  fused_matches_plain(33, 64, 300, 0, 0);
  fused_matches_plain(17, 19, 131, 6, 40);
  bad_inputs_return_status();
  adversarial_spans();
  large_magnitudes_stay_finite();
  saved_backward_large_magnitudes();
  streamed_backward_matches_cached();
  saved_backward(9, 1000, 31);
  saved_backward(130, 32771, 32);  // 17 MB of gradient: streamed
  return grpo::test::report("test_logprob");
}
