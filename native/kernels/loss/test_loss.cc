// Policy loss: upstream vectors on fixture F, the analytic gradient against central differences
// of the double reference for every loss type × IS level × aggregation, 1 vs 2 threads, bad input.
#include <cmath>
#include <cstring>
#include <vector>

#include "check.h"
#include "grpo/loss.h"
#include "loss_reference.h"

using grpo::test::close;

namespace {

grpo_loss_options base_options() {
  grpo_loss_options o{};
  o.surrogate = {GRPO_LOSS_CLIP, 0.2, 0.2, 0.0, 0.0, 0.0, 5.0, 1.0, 1.05, 2.0, 3.0, 3.0, 2.0};
  o.is_level = GRPO_IS_TOKEN;
  o.num_items = 3;
  o.kl = {GRPO_KL_K3, GRPO_KL_CLAMP_NONE, 0, 0.0, 0};
  o.aggregate = {GRPO_AGG_LOCAL_TOKEN_MEAN, 0, 0.0, 0.0, 9.0, 0.0, 1.0};
  o.top_entropy_quantile = 1.0;
  return o;
}

double loss_on_f(grpo_loss_options o) {
  const float logp[] = {-1.0f, -0.5945349f, -1.3566749f, 0.0f, -1.6931472f, -0.6137056f, 0.0f, 0.0f};
  const float old[] = {-1, -1, -1, 0, -1, -2, 0, 0}, adv[] = {0.5f, -1.0f};
  const uint8_t mask[] = {1, 1, 1, 0, 1, 1, 0, 0};
  float grad[8];
  grpo_loss_stats stats{};
  CHECK(grpo_policy_loss(logp, old, nullptr, adv, 0, mask, nullptr, nullptr, 2, 4, &o, grad, &stats) == GRPO_OK);
  return stats.loss;
}

void fixture_f_vectors() {
  grpo_loss_options o = base_options();
  const double bnpo = loss_on_f(o);
  o.surrogate.dual_clip_c = 3.0, o.surrogate.log_ratio_clamp = 20.0;
  const double verl = loss_on_f(o);
  o = base_options(), o.is_level = GRPO_IS_SEQUENCE, o.aggregate.mode = GRPO_AGG_SEQ_MEAN_TOKEN_MEAN;
  const double gspo = loss_on_f(o);
  o.is_level = GRPO_IS_TOKEN, o.surrogate.type = GRPO_LOSS_SAPO;
  const double sapo = loss_on_f(o);
  o.surrogate.type = GRPO_LOSS_GEO_MEAN;
  const double geo = loss_on_f(o);
  const double actual[] = {bnpo, verl, gspo, sapo, geo};
  const double expected[] = {0.67, 0.47, 0.4530077, 0.7512254, 0.6675586};  // TV14, TV15, TV17, TV18, TV20
  close("fixture F", actual, expected, 5, 1e-6, 1e-5);
}

struct Problem {
  int64_t rows = 3, cols = 5;
  std::vector<float> logp, old, ref, adv, grad;
  std::vector<uint8_t> mask;
  std::vector<int32_t> segments;
};

Problem random_problem(uint32_t seed) {
  Problem p;
  const int64_t n = p.rows * p.cols;
  p.logp = grpo::test::random_floats(n, 0.5f, seed);
  std::vector<float> noise = grpo::test::random_floats(2 * n, 0.3f, seed + 1);
  p.adv = grpo::test::random_floats(n, 1.0f, seed + 2);
  p.old.resize(n), p.ref.resize(n), p.grad.resize(n), p.mask.resize(n), p.segments.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    p.logp[i] -= 1.0f, p.old[i] = p.logp[i] + noise[i], p.ref[i] = p.logp[i] + noise[n + i];
    p.mask[i] = (i * 7) % 5 != 0, p.segments[i] = static_cast<int32_t>((i * 3) % 5) - 1;
  }
  return p;
}

double reference_loss(const Problem& p, const std::vector<double>& logp, const std::vector<double>& old,
                      const grpo_loss_options& o) {
  const std::vector<double> ref(p.ref.begin(), p.ref.end()), adv(p.adv.begin(), p.adv.end());
  const grpo::reference::LossInput in{logp.data(), old.data(), ref.data(), adv.data(), p.mask.data(), p.segments.data(), true,
                                      p.rows, p.cols};
  return grpo::reference::policy_loss(in, o);
}

// Central differences; with stop-gradient weights (CISPO, VESPO) old moves with logp so r stays put.
std::vector<double> finite_differences(const Problem& p, const grpo_loss_options& o, bool hold_ratio) {
  std::vector<double> logp(p.logp.begin(), p.logp.end()), old(p.old.begin(), p.old.end()), grad(logp.size());
  const double h = 1e-6;
  for (size_t i = 0; i < logp.size(); ++i) {
    logp[i] += h, old[i] += hold_ratio ? h : 0.0;
    const double up = reference_loss(p, logp, old, o);
    logp[i] -= 2 * h, old[i] -= hold_ratio ? 2 * h : 0.0;
    const double down = reference_loss(p, logp, old, o);
    logp[i] += h, old[i] += hold_ratio ? h : 0.0;
    grad[i] = (up - down) / (2 * h);
  }
  return grad;
}

void gradient_matches_finite_differences(int32_t type, int32_t level, int32_t mode, uint32_t seed) {
  Problem p = random_problem(seed);
  grpo_loss_options o = base_options();
  o.surrogate.type = type, o.is_level = level, o.aggregate.mode = mode;
  const bool stop_gradient = type == GRPO_LOSS_CISPO_CAP || type == GRPO_LOSS_CISPO_CLAMP || type == GRPO_LOSS_VESPO;
  o.kl = {static_cast<int32_t>(seed % 4), static_cast<int32_t>(seed % 3), static_cast<int32_t>(seed % 2), stop_gradient ? 0.0 : 0.05, 0};
  o.surrogate.delta = seed % 2 ? 1.5 : 0.0, o.surrogate.dual_clip_c = seed % 3 ? 3.0 : 0.0;
  grpo_loss_stats stats{};
  CHECK(grpo_policy_loss(p.logp.data(), p.old.data(), p.ref.data(), p.adv.data(), 1, p.mask.data(), p.segments.data(),
                         nullptr, p.rows, p.cols, &o, p.grad.data(), &stats) == GRPO_OK);
  const std::vector<double> expected = finite_differences(p, o, stop_gradient);
  if (!close("gradient vs finite differences", p.grad.data(), expected.data(), expected.size(), 2e-6, 2e-4))
    std::fprintf(stderr, "  type %d level %d aggregation %d seed %u\n", type, level, mode, seed);
  const std::vector<double> logp(p.logp.begin(), p.logp.end()), old(p.old.begin(), p.old.end());
  const double reference = reference_loss(p, logp, old, o);
  close("loss vs reference", &stats.loss, &reference, 1, 1e-6, 1e-5);
}

void threads_bitwise_equal() {
  const int64_t rows = 64, cols = 700, n = rows * cols;
  std::vector<float> logp = grpo::test::random_floats(n, 0.5f, 5), old = grpo::test::random_floats(n, 0.5f, 6);
  std::vector<float> adv = grpo::test::random_floats(n, 1.0f, 7), one(n), two(n);
  std::vector<uint8_t> mask(n);
  for (int64_t i = 0; i < n; ++i) mask[i] = (i % cols) < 400 + (i / cols);
  for (int32_t level : {GRPO_IS_TOKEN, GRPO_IS_SEQUENCE}) {
    grpo_loss_options o = base_options();
    o.is_level = level;
    grpo_loss_stats s1{}, s2{};
    grpo_set_num_threads(1);
    CHECK(grpo_policy_loss(logp.data(), old.data(), nullptr, adv.data(), 1, mask.data(), nullptr, nullptr, rows, cols, &o, one.data(), &s1) == GRPO_OK);
    grpo_set_num_threads(2);
    CHECK(grpo_policy_loss(logp.data(), old.data(), nullptr, adv.data(), 1, mask.data(), nullptr, nullptr, rows, cols, &o, two.data(), &s2) == GRPO_OK);
    CHECK(std::memcmp(one.data(), two.data(), n * sizeof(float)) == 0);
    CHECK(std::memcmp(&s1, &s2, sizeof s1) == 0);
  }
}

void bad_input() {
  Problem p = random_problem(9);
  grpo_loss_options o = base_options();
  const auto call = [&](const grpo_loss_options* options, const float* ref) {
    return grpo_policy_loss(p.logp.data(), p.old.data(), ref, p.adv.data(), 1, p.mask.data(), p.segments.data(), nullptr,
                            p.rows, p.cols, options, p.grad.data(), nullptr);
  };
  CHECK(call(nullptr, nullptr) == GRPO_ERR_INVALID_ARGUMENT);
  o.surrogate.type = 42;
  CHECK(call(&o, nullptr) == GRPO_ERR_INVALID_ARGUMENT);
  o = base_options(), o.kl.beta = 0.1;
  CHECK(call(&o, nullptr) == GRPO_ERR_INVALID_ARGUMENT);
  o = base_options(), o.aggregate.accumulation_steps = 0.5;
  CHECK(call(&o, nullptr) == GRPO_ERR_VALUE_RANGE);
  o = base_options(), o.is_level = GRPO_IS_ITEM;
  p.segments[1] = -7, p.mask[1] = 1;
  CHECK(call(&o, nullptr) == GRPO_ERR_INDEX_RANGE);
  o = base_options(), p.logp[1] = NAN;
  CHECK(call(&o, nullptr) == GRPO_ERR_NON_FINITE);
  p.mask[1] = 0;  // masked out: never read
  CHECK(call(&o, nullptr) == GRPO_OK);
}

// TRL grpo_trainer.py L3222-3253: with a [B, 1] sequence ratio the clip ratios are Σ flag / B; the
// all-positions mode (TRL luspo's [B, T] mean) reads padding, so padding must be finite there.
void statistics_and_padding() {
  const float logp[] = {0.3f, 0.3f, 0.3f, 0.0f, 0.0f, NAN}, adv[] = {1.0f, 1.0f};  // old = 0: log-ratios = logp
  const float old[] = {0, 0, 0, 0, 0, 0};
  const uint8_t mask[] = {1, 1, 1, 1, 0, 0};
  float grad[6];
  grpo_loss_options o = base_options();
  grpo_loss_stats token{}, sequence{};
  CHECK(grpo_policy_loss(logp, old, nullptr, adv, 0, mask, nullptr, nullptr, 2, 3, &o, grad, &token) == GRPO_OK);
  o.is_level = GRPO_IS_SEQUENCE;
  CHECK(grpo_policy_loss(logp, old, nullptr, adv, 0, mask, nullptr, nullptr, 2, 3, &o, grad, &sequence) == GRPO_OK);
  const double actual[] = {token.clip_ratio_high, sequence.clip_ratio_high, sequence.clip_ratio_region};
  const double expected[] = {0.75, 0.5, 0.5};  // row 0 (r = 1.35 > 1.2, A > 0) holds 3 of the 4 tokens
  close("sequence-level clip ratios per row", actual, expected, 3, 1e-12, 0.0);
  CHECK(std::isnan(sequence.phi_seq_mean));
  o.aggregate.mode = GRPO_AGG_ALL_POSITIONS_LENGTH_WEIGHTED;
  CHECK(grpo_policy_loss(logp, old, nullptr, adv, 0, mask, nullptr, nullptr, 2, 3, &o, grad, nullptr) == GRPO_ERR_NON_FINITE);
  const int32_t segments[] = {0, 0, 0, 0, 0, 0};
  o.is_level = GRPO_IS_ITEM;
  CHECK(grpo_policy_loss(logp, old, nullptr, adv, 0, mask, segments, nullptr, 2, 3, &o, grad, nullptr) == GRPO_ERR_INVALID_ARGUMENT);
}

}  // namespace

int main() {
  fixture_f_vectors();
  uint32_t seed = 100;
  for (int32_t type = GRPO_LOSS_CLIP; type <= GRPO_LOSS_GEO_MEAN; ++type)
    for (int32_t level : {GRPO_IS_TOKEN, GRPO_IS_SEQUENCE, GRPO_IS_ITEM})
      for (int32_t mode = GRPO_AGG_GLOBAL_TOKEN_MEAN; mode <= GRPO_AGG_TOKEN_SUM_OVER_L; ++mode)
        gradient_matches_finite_differences(type, level, mode, seed++);
  threads_bitwise_equal();
  bad_input();
  statistics_and_padding();
  return grpo::test::report("test_loss");
}
