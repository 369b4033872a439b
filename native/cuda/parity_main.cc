// grpo_cuda_parity: the CUDA kernels against the CPU kernels on the same inputs, then GPU timings, with no
// Node (GPU images may lack it). The CUDA kernels are linked under renamed C symbols (grpo_x → grpo_cuda_x,
// native/cuda/CMakeLists.txt) beside the CPU core. Exit status = number of failed checks; 77 = no device.
//   cmake -S . -B build-gpu -G Ninja -DGRPO_WITH_CUDA=ON -DGRPO_BUILD_TESTS=OFF
//   cmake --build build-gpu --target grpo_cuda_parity && build-gpu/native/cuda/grpo_cuda_parity
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "bf16.h"
#include "check.h"
#include "grpo/advantage.h"
#include "grpo/logprob.h"
#include "grpo/sampling.h"
#include "grpo_cuda.h"

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

// Forward (2·T·H·V FLOPs) and backward (recompute + two gradient GEMMs: 6·T·H·V) of the fused head with bf16
// inputs; HBM floor: forward reads the bf16 weight once, backward reads it twice and writes the float32 grad_weight.
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
  const double f_tflops = 2 * thv / f / 1e9, b_tflops = 6 * thv / b / 1e9, fb_tflops = 8 * thv / (f + b) / 1e9;
  std::printf("\nfused LM head, bf16 inputs, T=%lld H=%lld V=%lld (bf16 tensor-core roof %.0f TFLOPS, HBM %.0f GB/s)\n",
              (long long)T, (long long)H, (long long)V, kBf16Tflops, kHbmGBs);
  std::printf("  forward : %8.2f ms  %6.1f TFLOPS (%4.1f%% of roof)  weight read %6.0f GB/s\n", f, f_tflops,
              100 * f_tflops / kBf16Tflops, 2 * vh / f / 1e6);
  std::printf("  backward: %8.2f ms  %6.1f TFLOPS (%4.1f%% of roof)  weight 2x + grad_weight %6.0f GB/s\n", b, b_tflops,
              100 * b_tflops / kBf16Tflops, (4 * vh + 4 * vh) / b / 1e6);
  std::printf("  fwd+bwd : %8.2f ms  %6.1f TFLOPS (%4.1f%% of roof)\n", f + b, fb_tflops, 100 * fb_tflops / kBf16Tflops);
}

}  // namespace

int main() {
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
  const int failed = grpo::test::report("grpo_cuda_parity");
  timings();
  bf16_timings();
  return failed;
}
