// grpo_cuda_parity: the CUDA kernels against the CPU kernels on the same inputs, then GPU timings, with no
// Node (GPU images may lack it). The CUDA kernels are linked under renamed C symbols (grpo_x → grpo_cuda_x,
// native/cuda/tests/CMakeLists.txt) beside the CPU core. Exit status = number of failed checks; 77 = no device.
//   cmake -S . -B build-gpu -G Ninja -DGRPO_WITH_CUDA=ON -DGRPO_BUILD_TESTS=OFF
//   cmake --build build-gpu --target grpo_cuda_parity && build-gpu/native/cuda/tests/grpo_cuda_parity
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "check.h"
#include "grpo/advantage.h"
#include "grpo/logprob.h"
#include "grpo/loss.h"
#include "grpo/sampling.h"
#include "grpo_cuda.h"
#include "model_parity.h"
#include "runtime/bf16.h"

extern "C" {
decltype(grpo_logprob_forward) grpo_cuda_logprob_forward;
decltype(grpo_logprob_backward) grpo_cuda_logprob_backward;
decltype(grpo_linear_logprob_forward) grpo_cuda_linear_logprob_forward;
decltype(grpo_linear_logprob_backward) grpo_cuda_linear_logprob_backward;
decltype(grpo_linear_logprob_forward_bf16) grpo_cuda_linear_logprob_forward_bf16;
decltype(grpo_linear_logprob_backward_bf16) grpo_cuda_linear_logprob_backward_bf16;
decltype(grpo_group_advantages) grpo_cuda_group_advantages;
decltype(grpo_rank_advantages) grpo_cuda_rank_advantages;
decltype(grpo_sample) grpo_cuda_sample;
decltype(grpo_policy_loss) grpo_cuda_policy_loss;
}

namespace {

using grpo::test::close;
using grpo::test::random_floats;

std::vector<int32_t> targets_for(int64_t rows, int64_t vocab) {
  std::vector<int32_t> t(rows);
  for (int64_t r = 0; r < rows; ++r) t[r] = static_cast<int32_t>((r * 7919) % vocab);
  return t;
}

void ok(grpo_status status, const char* what) {
  if (status != GRPO_OK) std::fprintf(stderr, "%s: status %d: %s\n", what, status, grpo_last_error());
  CHECK(status == GRPO_OK);
}

void logprob_parity(int64_t rows, int64_t vocab) {
  auto logits = random_floats(rows * vocab, 4.0f, 1);
  auto targets = targets_for(rows, vocab);
  targets[0] = -100;
  const grpo_logprob_options o{0.7f, -100};
  std::vector<float> logp[2], entropy[2], grad[2];
  const std::vector<float> g_logp = random_floats(rows, 1.0f, 2), g_entropy = random_floats(rows, 1.0f, 3);
  for (int gpu = 0; gpu < 2; ++gpu) {
    logp[gpu].resize(rows), entropy[gpu].resize(rows), grad[gpu].resize(rows * vocab);
    auto fwd = gpu ? grpo_cuda_logprob_forward : grpo_logprob_forward;
    auto bwd = gpu ? grpo_cuda_logprob_backward : grpo_logprob_backward;
    ok(fwd(logits.data(), targets.data(), rows, vocab, &o, logp[gpu].data(), entropy[gpu].data()), "logprob forward");
    ok(bwd(logits.data(), targets.data(), rows, vocab, &o, g_logp.data(), g_entropy.data(), grad[gpu].data()), "logprob backward");
  }
  close("logp", logp[1].data(), logp[0].data(), rows, 2e-5, 1e-5);
  close("entropy", entropy[1].data(), entropy[0].data(), rows, 2e-5, 1e-5);
  close("grad_logits", grad[1].data(), grad[0].data(), rows * vocab, 1e-6, 1e-4);
}

void linear_parity(int64_t rows, int64_t hidden, int64_t vocab) {
  auto h = random_floats(rows * hidden, 1.0f, 4), w = random_floats(vocab * hidden, 0.2f, 5), b = random_floats(vocab, 0.5f, 6);
  auto targets = targets_for(rows, vocab);
  const grpo_linear_logprob_options o{1.3f, -100, 0, 1024};
  const std::vector<float> g_logp = random_floats(rows, 1.0f, 7);
  std::vector<float> logp[2], gh[2], gw[2], gb[2];
  for (int gpu = 0; gpu < 2; ++gpu) {
    logp[gpu].resize(rows), gh[gpu].resize(rows * hidden), gw[gpu].resize(vocab * hidden), gb[gpu].resize(vocab);
    auto fwd = gpu ? grpo_cuda_linear_logprob_forward : grpo_linear_logprob_forward;
    auto bwd = gpu ? grpo_cuda_linear_logprob_backward : grpo_linear_logprob_backward;
    ok(fwd(h.data(), w.data(), b.data(), targets.data(), rows, hidden, vocab, &o, logp[gpu].data(), nullptr, nullptr),
       "linear forward");
    ok(bwd(h.data(), w.data(), b.data(), targets.data(), rows, hidden, vocab, &o, g_logp.data(), nullptr, gh[gpu].data(),
           gw[gpu].data(), gb[gpu].data(), 0),
       "linear backward");
  }
  close("linear logp", logp[1].data(), logp[0].data(), rows, 1e-4, 1e-4);
  close("grad_hidden", gh[1].data(), gh[0].data(), rows * hidden, 1e-4, 1e-3);
  close("grad_weight", gw[1].data(), gw[0].data(), vocab * hidden, 1e-4, 1e-3);
  close("grad_bias", gb[1].data(), gb[0].data(), vocab, 1e-4, 1e-3);
}

void advantage_parity() {
  auto rewards = random_floats(4096, 1.0f, 8);
  for (size_t i = 0; i < rewards.size(); i += 97) rewards[i] = NAN;
  const grpo_advantage_options o{GRPO_ADV_SCALE_GROUP, GRPO_ADV_SINGLETON_RAW, GRPO_ADV_NAN_EXCLUDE, 1e-4};
  std::vector<float> adv[2];
  for (int gpu = 0; gpu < 2; ++gpu) {
    adv[gpu].resize(rewards.size());
    auto group = gpu ? grpo_cuda_group_advantages : grpo_group_advantages;
    ok(group(rewards.data(), 4096, 8, nullptr, 0, &o, adv[gpu].data(), nullptr), "group advantages");
  }
  close("group advantages (bitwise)", adv[1].data(), adv[0].data(), rewards.size(), 0.0, 0.0);
}

void sampling_parity(const char* name, const grpo_sampling_params& params, int64_t rows, int64_t vocab) {
  auto logits = random_floats(rows * vocab, 3.0f, 9);
  std::vector<int32_t> tokens[2] = {std::vector<int32_t>(rows), std::vector<int32_t>(rows)};
  ok(grpo_sample(logits.data(), rows, vocab, &params, tokens[0].data(), nullptr, nullptr), name);
  ok(grpo_cuda_sample(logits.data(), rows, vocab, &params, tokens[1].data(), nullptr, nullptr), name);
  int differing = 0;
  for (int64_t r = 0; r < rows; ++r) differing += tokens[0][r] != tokens[1][r];
  std::printf("  sample %-28s rows with another token: %d of %lld\n", name, differing, static_cast<long long>(rows));
  CHECK(differing <= (params.top_p ? 1 : 0));  // top-p compares float sums taken in another order (docs/cuda.md)
}

void sampling_parities() {
  const int64_t rows = 128, vocab = 32000;
  std::vector<float> top_p(rows, 0.9f), min_p(rows, 0.05f), rep(rows, 1.3f), temp0(rows, 0.0f);
  std::vector<int32_t> top_k(rows, 50), offsets(rows + 1), history(rows * 20);
  for (int64_t r = 0; r <= rows; ++r) offsets[r] = static_cast<int32_t>(r * 20);
  for (size_t i = 0; i < history.size(); ++i) history[i] = static_cast<int32_t>((i * 2654435761u) % vocab);
  grpo_sampling_params p{};
  for (uint64_t seed : {0ull, 7ull, 123456789ull}) {
    p = {};
    p.seed = seed, p.step = seed * 3;
    sampling_parity("plain", p, rows, vocab);
    p.top_k = top_k.data();
    sampling_parity("top-k 50", p, rows, vocab);
    p.top_p = top_p.data();
    sampling_parity("top-k 50 + top-p 0.9", p, rows, vocab);
    p.top_k = nullptr, p.min_p = min_p.data();
    sampling_parity("top-p 0.9 + min-p 0.05", p, rows, vocab);
    p.repetition_penalty = rep.data(), p.history = history.data(), p.history_offsets = offsets.data();
    sampling_parity("+ repetition penalty", p, rows, vocab);
    p = {};
    p.temperature = temp0.data();
    sampling_parity("greedy", p, rows, vocab);
  }
}

// ---- Policy loss: every surrogate × IS level × aggregation, KL estimators and clamps, edge cases ----

struct LossInputs {
  int64_t rows, cols;
  std::vector<float> logp, old, ref, adv, entropy;  // [rows, cols]; adv [rows, cols] or [rows]
  std::vector<uint8_t> mask;
  std::vector<int32_t> segments;
};

// Log-ratios are kept 2e-3 away from the ratio bounds the options below use (ε 0.2, delta 1.5, dual clip 3,
// CISPO cap 5): the devices' exp differ by a few ulps, which must not move a token across a clip boundary.
float away_from_bounds(float d) {
  for (double bound : {std::log(0.8), std::log(1.2), std::log(1.5), std::log(3.0), std::log(5.0)})
    if (std::fabs(d - bound) < 2e-3) d = static_cast<float>(bound + 2e-3);
  return d;
}

// spread: the log-ratio scale (0.3 ordinary, 30 where exp saturates and every clamp binds).
LossInputs loss_inputs(int64_t rows, int64_t cols, float spread, uint32_t seed) {
  const size_t n = rows * cols;
  LossInputs in{rows, cols, random_floats(n, 1.0f, seed), {}, random_floats(n, spread, seed + 1),
                random_floats(n, 1.0f, seed + 2), random_floats(n, 1.5f, seed + 3), std::vector<uint8_t>(n), std::vector<int32_t>(n)};
  const std::vector<float> d = random_floats(n, spread, seed + 4);
  in.old.resize(n);
  for (size_t i = 0; i < n; ++i) {
    in.logp[i] = -std::fabs(in.logp[i]) - 0.05f;
    in.old[i] = in.logp[i] - away_from_bounds(d[i]);
    in.ref[i] += in.logp[i], in.entropy[i] = std::fabs(in.entropy[i]);
    const int64_t row = i / cols, col = i % cols;
    in.mask[i] = row != 1 && (i * 7 + seed) % 5 != 0;  // row 1 is empty
    in.segments[i] = static_cast<int32_t>((col / 7) % 6) - 1;  // -1 … 4: overflow beyond num_items = 3
    if (!in.mask[i]) in.logp[i] = NAN, in.old[i] = INFINITY;  // masked-out padding is never read
  }
  return in;
}

grpo_loss_options loss_options(int32_t type, int32_t level, int32_t mode) {
  grpo_loss_options o{};
  o.surrogate = {type, 0.2, 0.2, 0.0, 0.0, 0.0, 5.0, 1.0, 1.05, 2.0, 3.0, 3.0, 2.0};
  o.is_level = level, o.num_items = 3;
  o.kl = {GRPO_KL_K3, GRPO_KL_CLAMP_NONE, 0, 0.0, 0};
  o.aggregate = {mode, 0, 0.0, 0.0, 150.0, 0.0, 2.0};
  o.top_entropy_quantile = 1.0;
  return o;
}

std::vector<double> stat_values(const grpo_loss_stats& s) {
  return {s.loss, s.policy_loss, s.kl_mean, s.clip_ratio_low, s.clip_ratio_high, s.clip_ratio_region, s.dual_clip_ratio,
          s.ratio_mean, s.ratio_min, s.ratio_max, s.entropy_mean, s.ppo_kl, s.tokens};
}

// CUDA vs CPU: the same status and message; gradients within 1e-5 of the largest (few-ulp differences of
// exp and FMA contraction, cancelling between the direct and routed parts) plus 1e-4 relative; statistics
// within 1e-5 relative, the loss also within 1e-5·(1 + 4·Σ|grad|) (the same per-token terms summed in
// another order; |ℓ_t| ≤ 4·|∂ℓ_t/∂logp| for these inputs). NaN must match NaN.
void loss_parity(const char* name, const LossInputs& in, const grpo_loss_options& o, bool per_token) {
  std::vector<float> grad[2] = {std::vector<float>(in.logp.size()), std::vector<float>(in.logp.size())};
  grpo_loss_stats stats[2];
  grpo_status status[2];
  std::string message[2];
  for (int gpu = 0; gpu < 2; ++gpu) {
    auto loss = gpu ? grpo_cuda_policy_loss : grpo_policy_loss;
    status[gpu] = loss(in.logp.data(), in.old.data(), in.ref.data(), in.adv.data(), per_token, in.mask.data(),
                       in.segments.data(), in.entropy.data(), in.rows, in.cols, &o, grad[gpu].data(), &stats[gpu]);
    message[gpu] = status[gpu] == GRPO_OK ? "" : grpo_last_error();
  }
  if (status[0] != status[1] || message[0] != message[1])
    std::fprintf(stderr, "%s: CPU %d '%s', CUDA %d '%s'\n", name, status[0], message[0].c_str(), status[1], message[1].c_str());
  CHECK(status[0] == status[1] && message[0] == message[1]);
  if (status[0] != GRPO_OK) return;
  double largest = 0.0, total = 0.0;
  for (float g : grad[0]) largest = std::max(largest, static_cast<double>(std::fabs(g))), total += std::fabs(g);
  close(name, grad[1].data(), grad[0].data(), grad[0].size(), 1e-5 * largest, 1e-4);
  std::vector<double> cpu = stat_values(stats[0]), cuda = stat_values(stats[1]);
  for (size_t k = 0; k < cpu.size(); ++k) {
    const bool both_nan = std::isnan(cpu[k]) && std::isnan(cuda[k]);
    if (!both_nan) close(name, &cuda[k], &cpu[k], 1, k < 2 ? 1e-5 * (1.0 + 4.0 * total) : 1e-12, 1e-5);
  }
}

void loss_parities() {
  const LossInputs plain = loss_inputs(13, 97, 0.3f, 41), wild = loss_inputs(5, 33, 30.0f, 43);
  LossInputs rows_only = plain;
  rows_only.adv.resize(plain.rows);
  int runs = 0;
  for (int32_t type = GRPO_LOSS_CLIP; type <= GRPO_LOSS_GEO_MEAN; ++type)
    for (int32_t level = GRPO_IS_TOKEN; level <= GRPO_IS_ITEM; ++level)
      for (int32_t mode = GRPO_AGG_GLOBAL_TOKEN_MEAN; mode <= GRPO_AGG_TOKEN_SUM_OVER_L; ++mode) {
        char name[96];
        std::snprintf(name, sizeof name, "loss type %d level %d aggregation %d", type, level, mode);
        grpo_loss_options o = loss_options(type, level, mode);
        loss_parity(name, plain, o, true), loss_parity(name, rows_only, o, false), loss_parity(name, wild, o, true);
        o.surrogate.delta = 1.5, o.surrogate.dual_clip_c = 3.0, o.surrogate.log_ratio_clamp = 20.0;
        o.kl = {GRPO_KL_K3, GRPO_KL_CLAMP_VERL, 1, 0.1, 0};
        o.aggregate.token_count = 500.0, o.aggregate.sequence_count = 20.0, o.aggregate.loss_scale_factor = 64.0;
        o.top_entropy_quantile = 0.4;
        loss_parity(name, plain, o, true), loss_parity(name, wild, o, true);
        runs += 5;
      }
  for (int32_t estimator = GRPO_KL_K1; estimator <= GRPO_KL_K3; ++estimator)
    for (int32_t clamp = GRPO_KL_CLAMP_NONE; clamp <= GRPO_KL_CLAMP_OPENRLHF; ++clamp) {
      grpo_loss_options o = loss_options(GRPO_LOSS_CLIP, GRPO_IS_SEQUENCE_TOKEN, GRPO_AGG_LOCAL_TOKEN_MEAN);
      o.kl = {estimator, clamp, estimator % 2, 0.3, 0};
      loss_parity("loss KL estimator × clamp", plain, o, true);
      o.kl.bias_correction = o.kl.bias_correction && clamp != GRPO_KL_CLAMP_NONE;  // unclamped k3 × e^87 would overflow
      loss_parity("loss KL estimator × clamp", wild, o, true);
      runs += 2;
    }
  LossInputs empty = plain, bad = plain, bad_segment = plain;
  std::fill(empty.mask.begin(), empty.mask.end(), 0);
  bad.logp[2 * bad.cols + 3] = NAN, bad.mask[2 * bad.cols + 3] = 1;
  bad_segment.segments[4 * bad.cols + 9] = -2, bad_segment.mask[4 * bad.cols + 9] = 1;
  for (int32_t nan : {0, 1}) {
    grpo_loss_options o = loss_options(GRPO_LOSS_SAPO, GRPO_IS_ITEM, GRPO_AGG_SEQ_MEAN_TOKEN_MEAN);
    o.aggregate.empty_is_nan = nan;
    loss_parity("loss empty batch", empty, o, true), loss_parity("loss bad value", bad, o, true);
    loss_parity("loss bad segment", bad_segment, o, true);
    o.surrogate.type = GRPO_LOSS_CLIP, o.is_level = GRPO_IS_TOKEN;  // the CPU's clip row never reads segments here
    loss_parity("loss bad segment, clip token level", bad_segment, o, true);
    runs += 4;
  }
  std::printf("  policy loss: %d configurations compared\n", runs);
}

// GPU milliseconds (CUDA events) of `call`, median of 5 after a warm-up.
double gpu_ms(const std::function<grpo_status()>& call) {
  std::vector<double> ms;
  for (int i = 0; i < 6; ++i) {
    ok(call(), "timed call");
    if (i) ms.push_back(grpo_cuda_last_kernel_ms());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void timings() {
  constexpr double kHbmGBs = 4800, kBf16Tflops = 989;
  std::printf("\nGPU timings (CUDA events, copies excluded); H200 roofs: %.0f GB/s HBM, %.0f TFLOPS bf16 dense\n", kHbmGBs,
              kBf16Tflops);
  {
    const int64_t T = 1024, V = 151936;
    auto logits = random_floats(T * V, 4.0f, 10);
    auto targets = targets_for(T, V);
    std::vector<float> logp(T), g(T, 1.0f), grad(T * V);
    const grpo_logprob_options o{1.0f, -100};
    const double f = gpu_ms([&] { return grpo_cuda_logprob_forward(logits.data(), targets.data(), T, V, &o, logp.data(), nullptr); });
    const double b = gpu_ms([&] {
      return grpo_cuda_logprob_backward(logits.data(), targets.data(), T, V, &o, g.data(), nullptr, grad.data());
    });
    const double bytes = 4.0 * T * V;
    std::printf("  logprob fwd %lldx%lld: %.3f ms, %.0f GB/s (%.1f%% HBM)\n", (long long)T, (long long)V, f, bytes / f / 1e6,
                100 * bytes / f / 1e6 / kHbmGBs);
    std::printf("  logprob bwd %lldx%lld: %.3f ms, %.0f GB/s read+write (%.1f%% HBM)\n", (long long)T, (long long)V, b,
                2 * bytes / b / 1e6, 100 * 2 * bytes / b / 1e6 / kHbmGBs);
  }
  {
    const int64_t T = 2048, H = 2048, V = 32768;
    auto h = random_floats(T * H, 1.0f, 11), w = random_floats(V * H, 0.05f, 12);
    auto targets = targets_for(T, V);
    std::vector<float> logp(T), g(T, 1.0f / T), gh(T * H), gw(V * H);
    const grpo_linear_logprob_options o{1.0f, -100, 0, 0};
    const double f = gpu_ms([&] {
      return grpo_cuda_linear_logprob_forward(h.data(), w.data(), nullptr, targets.data(), T, H, V, &o, logp.data(), nullptr, nullptr);
    });
    const double b = gpu_ms([&] {
      return grpo_cuda_linear_logprob_backward(h.data(), w.data(), nullptr, targets.data(), T, H, V, &o, g.data(), nullptr, gh.data(),
                                               gw.data(), nullptr, 0);
    });
    const double thv = static_cast<double>(T) * H * V;
    std::printf("  fused fwd T=%lld H=%lld V=%lld: %.2f ms, %.1f TFLOPS (%.1f%% of bf16)\n", (long long)T, (long long)H,
                (long long)V, f, 2 * thv / f / 1e9, 100 * 2 * thv / f / 1e9 / kBf16Tflops);
    std::printf("  fused bwd (8THV with recompute): %.2f ms, %.1f TFLOPS (%.1f%% of bf16)\n", b, 8 * thv / b / 1e9,
                100 * 8 * thv / b / 1e9 / kBf16Tflops);
  }
  {
    const int64_t B = 256, V = 151936;
    auto logits = random_floats(B * V, 3.0f, 13);
    std::vector<int32_t> tokens(B);
    std::vector<float> top_p(B, 0.9f);
    std::vector<int32_t> top_k(B, 50);
    grpo_sampling_params p{};
    const double plain = gpu_ms([&] { return grpo_cuda_sample(logits.data(), B, V, &p, tokens.data(), nullptr, nullptr); });
    p.top_k = top_k.data(), p.top_p = top_p.data();
    const double cut = gpu_ms([&] { return grpo_cuda_sample(logits.data(), B, V, &p, tokens.data(), nullptr, nullptr); });
    const double bytes = 4.0 * B * V;
    std::printf("  sample plain %lldx%lld: %.1f us, %.0f GB/s\n", (long long)B, (long long)V, plain * 1e3, bytes / plain / 1e6);
    std::printf("  sample top-k 50 + top-p 0.9: %.1f us, %.0f GB/s\n", cut * 1e3, bytes / cut / 1e6);
  }
  {
    const int64_t B = 512, T = 2048;
    const LossInputs in = loss_inputs(B, T, 0.3f, 14);
    grpo_loss_options o = loss_options(GRPO_LOSS_CLIP, GRPO_IS_TOKEN, GRPO_AGG_LOCAL_TOKEN_MEAN);
    o.kl.beta = 0.04;
    std::vector<float> grad(B * T);
    const double ms = gpu_ms([&] {
      return grpo_cuda_policy_loss(in.logp.data(), in.old.data(), in.ref.data(), in.adv.data(), 1, in.mask.data(), nullptr,
                                   nullptr, B, T, &o, grad.data(), nullptr);
    });
    const double bytes = B * T * (4.0 * 4 + 1 + 4);  // logp, old, ref, advantage, mask read; gradient written
    std::printf("  policy loss fwd+bwd %lldx%lld (clip + k3 KL): %.1f us, %.0f GB/s (%.1f%% HBM)\n", (long long)B,
                (long long)T, ms * 1e3, bytes / ms / 1e6, 100 * bytes / ms / 1e6 / kHbmGBs);
  }
}

// ---- Fused LM head with bfloat16 hidden/weight: CUDA vs CPU, then GPU timings at a Qwen-sized head ----

std::vector<uint16_t> random_bf16(size_t n, float scale, uint32_t seed) {
  const std::vector<float> x = random_floats(n, scale, seed);
  std::vector<uint16_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = grpo::bf16::round(x[i]);
  return out;
}

double max_abs(const std::vector<float>& x) {
  double m = 0.0;
  for (float v : x) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

// Both devices round the gradient tile to bf16, but from logits summed in another order: a tile entry may
// round to the neighbouring bf16 value (2^-8 relative), so gradients compare against their largest entry.
void linear_bf16_parity(int64_t rows, int64_t hidden, int64_t vocab) {
  const auto h = random_bf16(rows * hidden, 1.0f, 31), w = random_bf16(vocab * hidden, 0.2f, 32);
  const auto b = random_floats(vocab, 0.5f, 33);
  auto targets = targets_for(rows, vocab);
  targets[rows / 2] = -100;
  const grpo_linear_logprob_options o{1.3f, -100, 0, 1024};
  const std::vector<float> g_logp = random_floats(rows, 1.0f, 34), g_entropy = random_floats(rows, 0.5f, 35);
  std::vector<float> logp[2], entropy[2], gh[2], gw[2], gb[2];
  for (int gpu = 0; gpu < 2; ++gpu) {
    logp[gpu].resize(rows), entropy[gpu].resize(rows), gh[gpu].resize(rows * hidden), gw[gpu].resize(vocab * hidden);
    gb[gpu].resize(vocab);
    auto fwd = gpu ? grpo_cuda_linear_logprob_forward_bf16 : grpo_linear_logprob_forward_bf16;
    auto bwd = gpu ? grpo_cuda_linear_logprob_backward_bf16 : grpo_linear_logprob_backward_bf16;
    ok(fwd(h.data(), w.data(), b.data(), targets.data(), rows, hidden, vocab, &o, logp[gpu].data(), entropy[gpu].data(),
           nullptr),
       "linear bf16 forward");
    ok(bwd(h.data(), w.data(), b.data(), targets.data(), rows, hidden, vocab, &o, g_logp.data(), g_entropy.data(),
           gh[gpu].data(), gw[gpu].data(), gb[gpu].data(), 0),
       "linear bf16 backward");
  }
  close("bf16 logp", logp[1].data(), logp[0].data(), rows, 1e-4, 1e-4);
  close("bf16 entropy", entropy[1].data(), entropy[0].data(), rows, 1e-4, 1e-4);
  close("bf16 grad_hidden", gh[1].data(), gh[0].data(), gh[0].size(), 5e-3 * max_abs(gh[0]), 0.0);
  close("bf16 grad_weight", gw[1].data(), gw[0].data(), gw[0].size(), 5e-3 * max_abs(gw[0]), 0.0);
  close("bf16 grad_bias", gb[1].data(), gb[0].data(), vocab, 1e-4, 1e-3);
}

// Forward (2·T·H·V FLOPs) and backward (statistics pass, tile recompute, two gradient GEMMs: 8·T·H·V) of the
// fused head with bf16 inputs. Weight traffic: forward reads the bf16 weight once; backward reads it three times
// and writes the float32 grad_weight.
void bf16_timings() {
  constexpr double kHbmGBs = 4800, kBf16Tflops = 989;
  const int64_t T = 8192, H = 4096, V = 151936;
  const auto h = random_bf16(T * H, 1.0f, 41), w = random_bf16(V * H, 0.02f, 42);
  const auto targets = targets_for(T, V);
  std::vector<float> logp(T), g(T, 1.0f / T), gh(T * H), gw(V * H);
  const grpo_linear_logprob_options o{1.0f, -100, 0, 0};
  const double f = gpu_ms([&] {
    return grpo_cuda_linear_logprob_forward_bf16(h.data(), w.data(), nullptr, targets.data(), T, H, V, &o, logp.data(),
                                                 nullptr, nullptr);
  });
  const double b = gpu_ms([&] {
    return grpo_cuda_linear_logprob_backward_bf16(h.data(), w.data(), nullptr, targets.data(), T, H, V, &o, g.data(),
                                                  nullptr, gh.data(), gw.data(), nullptr, 0);
  });
  const double thv = static_cast<double>(T) * H * V, vh = static_cast<double>(V) * H;
  const double f_tflops = 2 * thv / f / 1e9, b_tflops = 8 * thv / b / 1e9, fb_tflops = 10 * thv / (f + b) / 1e9;
  std::printf("\nfused LM head, bf16 inputs, T=%lld H=%lld V=%lld (bf16 tensor-core roof %.0f TFLOPS, HBM %.0f GB/s)\n",
              (long long)T, (long long)H, (long long)V, kBf16Tflops, kHbmGBs);
  std::printf("  forward : %8.2f ms  %6.1f TFLOPS (%4.1f%% of roof)  weight read %6.0f GB/s\n", f, f_tflops,
              100 * f_tflops / kBf16Tflops, 2 * vh / f / 1e6);
  std::printf("  backward: %8.2f ms  %6.1f TFLOPS (%4.1f%% of roof)  weight 3x + grad_weight %6.0f GB/s\n", b, b_tflops,
              100 * b_tflops / kBf16Tflops, (6 * vh + 4 * vh) / b / 1e6);
  std::printf("  fwd+bwd : %8.2f ms  %6.1f TFLOPS (%4.1f%% of roof)\n", f + b, fb_tflops, 100 * fb_tflops / kBf16Tflops);
}

}  // namespace

// --parity-only: no timings (for runs under compute-sanitizer, where timings mean nothing).
int main(int argc, char** argv) {
  const bool timed = !(argc > 1 && std::strcmp(argv[1], "--parity-only") == 0);
  int count = 0;
  char message[256];
  if (grpo_cuda_probe(&count, message, sizeof message) != 0) {
    std::printf("no usable CUDA device: %s\n", message);
    return 77;
  }
  std::printf("device: %s\n", message);
  logprob_parity(37, 5003);
  logprob_parity(8, 151936);
  linear_parity(300, 128, 4099);
  linear_parity(5, 33, 77);
  linear_bf16_parity(300, 128, 4099);
  linear_bf16_parity(5, 33, 77);
  advantage_parity();
  sampling_parities();
  loss_parities();
  grpo::cuda::model_parities();
  const int failed = grpo::test::report("grpo_cuda_parity");
  if (timed) {
    timings();
    bf16_timings();
    grpo::cuda::model_timings();
  }
  return failed;
}
