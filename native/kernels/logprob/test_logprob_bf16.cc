// Fused LM-head log-prob with bfloat16 hidden/weight against the references on the widened inputs: random and
// adversarial inputs (ignore_index rows, huge logits, vocab not a multiple of the chunk), thread-count
// determinism, rounding of the bf16 helpers, and the argument errors.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "check.h"
#include "grpo/logprob.h"
#include "linear_logprob_reference.h"
#include "runtime/bf16.h"

using grpo::test::close;
using grpo::test::random_floats;

namespace {

struct Problem {
  int64_t rows, hidden, vocab;
  std::vector<uint16_t> h, w;  // bf16 [rows, hidden], [vocab, hidden]
  std::vector<float> bias;     // [vocab]
  std::vector<int32_t> targets;
};

std::vector<uint16_t> to_bf16(const std::vector<float>& x) {
  std::vector<uint16_t> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = grpo::bf16::round(x[i]);
  return out;
}

Problem make_problem(int64_t rows, int64_t hidden, int64_t vocab, float scale, uint32_t seed) {
  Problem p{rows, hidden, vocab, to_bf16(random_floats(rows * hidden, scale, seed)),
            to_bf16(random_floats(vocab * hidden, scale / std::sqrt(static_cast<float>(hidden)), seed + 1)),
            random_floats(vocab, 0.1f, seed + 2), std::vector<int32_t>(rows)};
  for (int64_t t = 0; t < rows; ++t) p.targets[t] = t % 5 == 1 ? -100 : static_cast<int32_t>((t * 7919) % vocab);
  return p;
}

double max_abs(const std::vector<double>& x) {
  double m = 0.0;
  for (double v : x) m = std::max(m, std::fabs(v));
  return m;
}

void forward_matches(const Problem& p, const grpo_linear_logprob_options& o, double tol) {
  const auto h = grpo::reference::widen_bf16(p.h.data(), p.h.size()), w = grpo::reference::widen_bf16(p.w.data(), p.w.size());
  std::vector<float> logp(p.rows), entropy(p.rows), lse(p.rows), f32_logp(p.rows);
  std::vector<double> ref_logp(p.rows), ref_entropy(p.rows);
  CHECK(grpo_linear_logprob_forward_bf16(p.h.data(), p.w.data(), p.bias.data(), p.targets.data(), p.rows, p.hidden, p.vocab,
                                         &o, logp.data(), entropy.data(), lse.data()) == GRPO_OK);
  grpo::reference::linear_logprob_forward(h.data(), w.data(), p.bias.data(), p.targets.data(), p.rows, p.hidden, p.vocab,
                                          o.temperature, o.ignore_index, ref_logp.data(), ref_entropy.data());
  close("bf16 logp", logp.data(), ref_logp.data(), p.rows, tol, tol);
  close("bf16 entropy", entropy.data(), ref_entropy.data(), p.rows, tol, tol);
  // The float32 kernel on the widened inputs computes the same products (exact in float32).
  CHECK(grpo_linear_logprob_forward(h.data(), w.data(), p.bias.data(), p.targets.data(), p.rows, p.hidden, p.vocab, &o,
                                    f32_logp.data(), nullptr, nullptr) == GRPO_OK);
  close("bf16 vs float32 logp", logp.data(), f32_logp.data(), p.rows, tol, tol);
}

// The gradient tile is rounded to bf16 (relative error <= 2^-9 per entry): compare against the exact
// gradient with a tolerance scaled by the largest entry.
void backward_matches(const Problem& p, const grpo_linear_logprob_options& o) {
  const auto h = grpo::reference::widen_bf16(p.h.data(), p.h.size()), w = grpo::reference::widen_bf16(p.w.data(), p.w.size());
  const std::vector<float> g_logp = random_floats(p.rows, 1.0f, 21), g_entropy = random_floats(p.rows, 0.5f, 22);
  std::vector<float> gh(p.rows * p.hidden, 1.0f), gw(p.vocab * p.hidden, 1.0f), gb(p.vocab, 1.0f);
  std::vector<double> rh(gh.size()), rw(gw.size()), rb(gb.size());
  CHECK(grpo_linear_logprob_backward_bf16(p.h.data(), p.w.data(), p.bias.data(), p.targets.data(), p.rows, p.hidden,
                                          p.vocab, &o, g_logp.data(), g_entropy.data(), gh.data(), gw.data(), gb.data(),
                                          0) == GRPO_OK);
  grpo::reference::linear_logprob_backward(h.data(), w.data(), p.bias.data(), p.targets.data(), p.rows, p.hidden, p.vocab,
                                           o.temperature, o.ignore_index, g_logp.data(), g_entropy.data(), rh.data(),
                                           rw.data(), rb.data());
  close("bf16 grad_hidden", gh.data(), rh.data(), gh.size(), 1e-2 * max_abs(rh), 0.0);
  close("bf16 grad_weight", gw.data(), rw.data(), gw.size(), 1e-2 * max_abs(rw), 0.0);
  close("bf16 grad_bias", gb.data(), rb.data(), gb.size(), 1e-5 * max_abs(rb) + 1e-6, 1e-4);  // from the unrounded tile
  for (int64_t t = 0; t < p.rows; ++t)
    if (p.targets[t] == o.ignore_index)
      for (int64_t k = 0; k < p.hidden; ++k) CHECK(gh[t * p.hidden + k] == 0.0f);
}

void matches_reference(int64_t rows, int64_t hidden, int64_t vocab, int64_t chunk_rows, int64_t chunk_vocab, float scale,
                       float temperature, double forward_tol) {
  const Problem p = make_problem(rows, hidden, vocab, scale, static_cast<uint32_t>(rows * 31 + vocab));
  const grpo_linear_logprob_options o{temperature, -100, chunk_rows, chunk_vocab};
  forward_matches(p, o, forward_tol);
  backward_matches(p, o);
}

void same_bits_for_any_thread_count() {
  const Problem p = make_problem(40, 96, 1300, 2.0f, 7);
  const grpo_linear_logprob_options o{1.0f, -100, 16, 0};
  const std::vector<float> g_logp = random_floats(p.rows, 1.0f, 8);
  std::vector<float> gh[2], gw[2];
  for (int i = 0; i < 2; ++i) {
    grpo_set_num_threads(i + 1);
    gh[i].resize(p.rows * p.hidden), gw[i].resize(p.vocab * p.hidden);
    CHECK(grpo_linear_logprob_backward_bf16(p.h.data(), p.w.data(), nullptr, p.targets.data(), p.rows, p.hidden, p.vocab,
                                            &o, g_logp.data(), nullptr, gh[i].data(), gw[i].data(), nullptr, 0) == GRPO_OK);
  }
  grpo_set_num_threads(0);
  CHECK(std::memcmp(gh[0].data(), gh[1].data(), gh[0].size() * sizeof(float)) == 0);
  CHECK(std::memcmp(gw[0].data(), gw[1].data(), gw[0].size() * sizeof(float)) == 0);
}

void rounding_is_nearest_even() {
  using grpo::bf16::round;
  CHECK(round(1.0f) == 0x3F80);
  CHECK(round(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);      // tie: to the even 1.0
  CHECK(round(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);  // tie: to the even 1 + 2^-6
  CHECK(round(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 0x3F81);
  CHECK(round(-2.0f) == 0xC000);
  CHECK(round(FLT_MAX) == 0x7F80);  // overflows to +Infinity
  CHECK(std::isnan(grpo::bf16::widen(round(NAN))));
  CHECK(!grpo::bf16::finite(round(INFINITY)) && grpo::bf16::finite(round(-3e38f)));
}

void bad_inputs_return_status() {
  Problem p = make_problem(3, 4, 5, 1.0f, 9);
  const grpo_linear_logprob_options o{1.0f, -100, 0, 0};
  std::vector<float> logp(3), gh(12), gw(20), g(3, 1.0f);
  p.w[7] = 0x7FC0;  // NaN
  CHECK(grpo_linear_logprob_forward_bf16(p.h.data(), p.w.data(), nullptr, p.targets.data(), 3, 4, 5, &o, logp.data(),
                                         nullptr, nullptr) == GRPO_ERR_NON_FINITE);
  CHECK(std::strstr(grpo_last_error(), "weight[7]") != nullptr);
  p.w[7] = 0x3F80;
  p.targets[2] = 5;
  CHECK(grpo_linear_logprob_forward_bf16(p.h.data(), p.w.data(), nullptr, p.targets.data(), 3, 4, 5, &o, logp.data(),
                                         nullptr, nullptr) == GRPO_ERR_INDEX_RANGE);
  p.targets[2] = 0;
  CHECK(grpo_linear_logprob_forward_bf16(nullptr, p.w.data(), nullptr, p.targets.data(), 3, 4, 5, &o, logp.data(), nullptr,
                                         nullptr) == GRPO_ERR_INVALID_ARGUMENT);
  CHECK(grpo_linear_logprob_backward_bf16(p.h.data(), p.w.data(), nullptr, p.targets.data(), 3, 4, 5, &o, g.data(), nullptr,
                                          gh.data(), gw.data(), g.data(), 0) == GRPO_ERR_INVALID_ARGUMENT);  // grad_bias, no bias
  CHECK(grpo_linear_logprob_forward_bf16(p.h.data(), p.w.data(), nullptr, p.targets.data(), 3, 0, 5, &o, logp.data(),
                                         nullptr, nullptr) == GRPO_ERR_SHAPE);
  CHECK(grpo_linear_logprob_forward_bf16(nullptr, p.w.data(), nullptr, nullptr, 0, 4, 5, &o, nullptr, nullptr, nullptr) ==
        GRPO_OK);
}

}  // namespace

int main() {
  rounding_is_nearest_even();
  matches_reference(9, 24, 50, 4, 16, 1.0f, 0.7f, 1e-4);
  matches_reference(33, 64, 1500, 0, 0, 2.0f, 1.0f, 1e-4);    // vocab over several weight slices
  matches_reference(17, 40, 1037, 5, 384, 1.0f, 1.3f, 1e-4);  // vocab not a multiple of the chunk
  matches_reference(6, 64, 300, 0, 0, 400.0f, 1.0f, 1e-3);    // huge logits (|z| ~ 1e4)
  same_bits_for_any_thread_count();
  bad_inputs_return_status();
  return grpo::test::report("test_logprob_bf16");
}
