// The built-in model in grpo_cuda_parity: the CUDA implementation of grpo/model.h (linked as grpo_cuda_model_*)
// against the CPU's on the same weights, then GPU timings at the 0.5B shape. Tolerances as in
// test/cuda-model-parity.test.ts.
#include "model_parity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "grpo/model.h"

extern "C" {
decltype(grpo_model_create) grpo_cuda_model_create;
decltype(grpo_model_init) grpo_cuda_model_init;
decltype(grpo_model_destroy) grpo_cuda_model_destroy;
decltype(grpo_model_num_parameters) grpo_cuda_model_num_parameters;
decltype(grpo_model_set_tensor) grpo_cuda_model_set_tensor;
decltype(grpo_model_score) grpo_cuda_model_score;
decltype(grpo_model_logits) grpo_cuda_model_logits;
decltype(grpo_model_backward) grpo_cuda_model_backward;
decltype(grpo_model_adamw_step) grpo_cuda_model_adamw_step;
decltype(grpo_model_get_optimizer) grpo_cuda_model_get_optimizer;
decltype(grpo_model_generate) grpo_cuda_model_generate;
}

namespace grpo::cuda {

namespace {

using grpo::test::close;
using grpo::test::random_floats;

// One backend's entry points, so each check runs the same code on both.
struct Backend {
  decltype(grpo_model_create)* create;
  decltype(grpo_model_destroy)* destroy;
  decltype(grpo_model_set_tensor)* set_tensor;
  decltype(grpo_model_score)* score;
  decltype(grpo_model_logits)* logits;
  decltype(grpo_model_backward)* backward;
  decltype(grpo_model_adamw_step)* adamw;
  decltype(grpo_model_get_optimizer)* get_optimizer;
  decltype(grpo_model_generate)* generate;
};

const Backend kCpu{grpo_model_create, grpo_model_destroy, grpo_model_set_tensor, grpo_model_score, grpo_model_logits,
                   grpo_model_backward, grpo_model_adamw_step, grpo_model_get_optimizer, grpo_model_generate};
const Backend kCuda{grpo_cuda_model_create, grpo_cuda_model_destroy, grpo_cuda_model_set_tensor, grpo_cuda_model_score,
                    grpo_cuda_model_logits, grpo_cuda_model_backward, grpo_cuda_model_adamw_step,
                    grpo_cuda_model_get_optimizer, grpo_cuda_model_generate};

constexpr int64_t kVocab = 67;
constexpr int32_t kIgnore = -100;

void ok(grpo_status status, const char* what) {
  if (status != GRPO_OK) std::fprintf(stderr, "%s: %s\n", what, grpo_last_error());
  CHECK(status == GRPO_OK);
}

// Packed sequences (by default three, T = 20); targets are the next tokens, ignored at each sequence's end.
struct Batch {
  std::vector<int32_t> tokens, targets;
  std::vector<int64_t> offsets;
  explicit Batch(std::vector<int64_t> sequence_offsets = {0, 6, 17, 20}) : offsets(std::move(sequence_offsets)) {
    const int64_t T = offsets.back();
    for (int64_t t = 0; t < T; ++t) tokens.push_back(static_cast<int32_t>((t * 37 + 11) % kVocab));
    for (int64_t t = 0; t < T; ++t)
      targets.push_back(std::count(offsets.begin(), offsets.end(), t + 1) ? kIgnore : tokens[t + 1]);
  }
  int64_t sequences() const { return static_cast<int64_t>(offsets.size()) - 1; }
};

struct Model {
  const Backend& b;
  grpo_model* m = nullptr;
  Model(const Backend& backend, const grpo_model_config& c) : b(backend) { ok(b.create(&c, &m), "create"); }
  ~Model() { b.destroy(m); }
};

// Weights N(0, 0.3²), norms 1 + N(0, 0.1²), biases N(0, 0.1²), on both models (tensor names from the CPU's).
void set_weights(Model& cpu, Model& cuda) {
  for (int64_t i = 0; i < grpo_model_num_tensors(cpu.m); ++i) {
    const char* name;
    int64_t ndim, shape[2];
    ok(grpo_model_tensor_info(cpu.m, i, &name, &ndim, shape), "tensor_info");
    const std::string n = name;
    const bool norm = n.find("norm.weight") != std::string::npos, bias = n.find(".bias") != std::string::npos;
    std::vector<float> values = random_floats(static_cast<size_t>(shape[0] * shape[1]), norm || bias ? 0.1f : 0.3f, 100 + i);
    if (norm)
      for (float& v : values) v += 1.0f;
    ok(cpu.b.set_tensor(cpu.m, name, values.data(), static_cast<int64_t>(values.size())), "set_tensor");
    ok(cuda.b.set_tensor(cuda.m, name, values.data(), static_cast<int64_t>(values.size())), "set_tensor");
  }
}

struct Scores {
  std::vector<float> logp, entropy, logits, grad;
  float norm = 0.0f;
};

Scores run(Model& model, const Batch& batch, int64_t num_parameters) {
  Scores s;
  const int64_t T = static_cast<int64_t>(batch.tokens.size());
  s.logp.resize(T);
  s.entropy.resize(T);
  s.logits.resize(T * kVocab);
  const grpo_score_options o{0.8f, kIgnore};
  ok(model.b.logits(model.m, batch.tokens.data(), batch.offsets.data(), batch.sequences(), s.logits.data()), "logits");
  ok(model.b.score(model.m, batch.tokens.data(), batch.offsets.data(), batch.sequences(), batch.targets.data(), &o, 1, s.logp.data(),
                   s.entropy.data()), "score");
  const std::vector<float> grad_logp = random_floats(T, 1.0f, 21), grad_entropy = random_floats(T, 0.5f, 22);
  ok(model.b.backward(model.m, grad_logp.data(), grad_entropy.data()), "backward");
  const grpo_adamw_options probe{0.0f, 0.0f, 0.999f, 1e-8f, 0.0f, 0.0f};  // β1 = 0, lr = 0: m = the gradient
  ok(model.b.adamw(model.m, &probe, &s.norm), "adamw");
  s.grad.resize(num_parameters);
  std::vector<float> v(num_parameters);
  int64_t step = 0;
  ok(model.b.get_optimizer(model.m, s.grad.data(), v.data(), &step), "get_optimizer");
  return s;
}

struct Generated {
  std::vector<int32_t> tokens;
  std::vector<float> logp;
  std::vector<int64_t> lengths;
};

// Three prompts (packed by `offsets`), up to 10 new tokens each.
Generated generate(Model& model, const std::vector<float>& temperature, const std::vector<int32_t>& prompts,
                   const std::vector<int64_t>& offsets) {
  const std::vector<int32_t> stop{5, 9};
  const std::vector<float> top_p(3, 0.95f);
  grpo_sampling_params p{};
  p.temperature = temperature.data();
  p.top_p = top_p.data();
  p.seed = 1234;
  const grpo_generate_options o{10, &p, stop.data(), 2};
  Generated g{std::vector<int32_t>(30), std::vector<float>(30), std::vector<int64_t>(3)};
  std::vector<uint8_t> truncated(3);
  ok(model.b.generate(model.m, prompts.data(), offsets.data(), 3, &o, g.tokens.data(), g.logp.data(), g.lengths.data(),
                      truncated.data()), "generate");
  return g;
}

const std::vector<int32_t> kPrompts{3, 14, 15, 9, 26, 5, 35, 8, 9, 7, 9, 32};
const std::vector<int64_t> kPromptOffsets{0, 4, 11, 12};

void model_parity(const char* name, const grpo_model_config& c, const Batch& batch = Batch(),
                  const std::vector<int32_t>& prompts = kPrompts, const std::vector<int64_t>& prompt_offsets = kPromptOffsets) {
  std::printf("model %s\n", name);
  Model cpu(kCpu, c), cuda(kCuda, c);
  set_weights(cpu, cuda);
  const int64_t n = grpo_model_num_parameters(cpu.m);
  const Scores want = run(cpu, batch, n), got = run(cuda, batch, n);
  close("model logp", got.logp.data(), want.logp.data(), got.logp.size(), 1e-4, 1e-4);
  close("model entropy", got.entropy.data(), want.entropy.data(), got.entropy.size(), 1e-4, 1e-4);
  close("model logits", got.logits.data(), want.logits.data(), got.logits.size(), 2e-4, 1e-4);
  float scale = 0.0f;
  for (float g : want.grad) scale = std::max(scale, std::fabs(g));
  close("model gradients", got.grad.data(), want.grad.data(), got.grad.size(), 1e-4 * scale, 1e-3);
  CHECK(std::fabs(got.norm - want.norm) <= 1e-4f * want.norm);
  for (const auto& temperature : {std::vector<float>{0, 0, 0}, std::vector<float>{1.0f, 0.7f, 0}}) {
    const Generated a = generate(cpu, temperature, prompts, prompt_offsets),
                    b = generate(cuda, temperature, prompts, prompt_offsets);
    CHECK(a.tokens == b.tokens);
    CHECK(a.lengths == b.lengths);
    close("model generation logp", b.logp.data(), a.logp.data(), b.logp.size(), 1e-4, 1e-4);
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void model_parities() {
  const auto config = [](int64_t heads, int64_t kv_heads, int64_t head_dim, int bias, int qk_norm, int tied) {
    return grpo_model_config{kVocab, 32, 48, 2, heads, kv_heads, head_dim, 64, 1e-6f, 10000.0f, tied, bias, qk_norm};
  };
  for (int tied = 0; tied < 2; ++tied) {
    model_parity(tied ? "Llama, tied" : "Llama, untied", config(4, 2, 8, 0, 0, tied));
    model_parity(tied ? "Qwen2 (bias), tied" : "Qwen2 (bias), untied", config(4, 1, 8, 1, 0, tied));
    model_parity(tied ? "Qwen3 (q/k norm), tied" : "Qwen3 (q/k norm), untied", config(4, 2, 16, 0, 1, tied));
  }
  // Sequences and a prompt longer than the attention kernels' 128-key (forward, dq) and 128-query (dk, dv)
  // chunks: the online softmax's rescaling between chunks and the chunk loops.
  grpo_model_config long_context = config(4, 2, 8, 1, 1, 1);
  long_context.max_position_embeddings = 512;
  std::vector<int32_t> long_prompts(143);
  for (size_t i = 0; i < long_prompts.size(); ++i) long_prompts[i] = static_cast<int32_t>((i * 31 + 5) % kVocab);
  model_parity("long sequences (q/k norm, bias, tied)", long_context, Batch({0, 150, 157, 297}), long_prompts, {0, 140, 142, 143});
}

void model_timings() {
  const grpo_model_config c{151936, 896, 4864, 24, 14, 2, 64, 32768, 1e-6f, 1e6f, 1, 1, 0};
  grpo_model* m = nullptr;
  if (grpo_cuda_model_create(&c, &m) != GRPO_OK || grpo_cuda_model_init(m, 1) != GRPO_OK) {
    std::printf("model timings: %s\n", grpo_last_error());
    return;
  }
  const int64_t rows = 16, len = 512, T = rows * len, params = grpo_cuda_model_num_parameters(m);
  std::vector<int32_t> tokens(T), targets(T);
  std::vector<int64_t> offsets;
  for (int64_t t = 0; t < T; ++t) tokens[t] = static_cast<int32_t>((t * 7919) % c.vocab_size);
  for (int64_t t = 0; t < T; ++t) targets[t] = (t + 1) % len == 0 ? kIgnore : tokens[t + 1];
  for (int64_t s = 0; s <= rows; ++s) offsets.push_back(s * len);
  std::vector<float> logp(T), grad(T, 1.0f / T);
  const grpo_score_options so{1.0f, kIgnore};
  const grpo_adamw_options ao{1e-5f, 0.9f, 0.999f, 1e-8f, 0.0f, 1.0f};
  const auto step = [&] {
    grpo_status s = grpo_cuda_model_score(m, tokens.data(), offsets.data(), rows, targets.data(), &so, 1, logp.data(), nullptr);
    if (s == GRPO_OK) s = grpo_cuda_model_backward(m, grad.data(), nullptr);
    return s == GRPO_OK ? grpo_cuda_model_adamw_step(m, &ao, nullptr) : s;
  };
  if (step() != GRPO_OK) {  // warm-up: activation buffers, gradients, moments
    std::printf("model timings: %s\n", grpo_last_error());
    grpo_cuda_model_destroy(m);
    return;
  }
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) step();
  const double train_s = seconds_since(start) / 3;
  const double tflops = 6.0 * static_cast<double>(params) * T / train_s / 1e12;
  std::printf("\nGPU model, Qwen2.5-0.5B shape (%lld parameters, float32, 3xTF32 GEMMs)\n", static_cast<long long>(params));
  std::printf("  training (score + backward + AdamW), %lld x %lld tokens: %.0f tokens/s, %.1f TFLOPS (6N per token) = %.1f%% of bf16 dense 989\n",
              static_cast<long long>(rows), static_cast<long long>(len), T / train_s, tflops, 100.0 * tflops / 989.0);
  const int64_t gen_rows = 64, new_tokens = 128;
  std::vector<int32_t> prompts(gen_rows * 32), out_tokens(gen_rows * new_tokens);
  std::vector<int64_t> prompt_offsets, lengths(gen_rows);
  std::vector<float> out_logp(gen_rows * new_tokens), temperature(gen_rows, 1.0f);
  std::vector<uint8_t> truncated(gen_rows);
  for (size_t i = 0; i < prompts.size(); ++i) prompts[i] = static_cast<int32_t>((i * 104729) % c.vocab_size);
  for (int64_t s = 0; s <= gen_rows; ++s) prompt_offsets.push_back(s * 32);
  grpo_sampling_params p{};
  p.temperature = temperature.data();
  p.seed = 3;
  const grpo_generate_options go{new_tokens, &p, nullptr, 0};
  start = std::chrono::steady_clock::now();
  const grpo_status status = grpo_cuda_model_generate(m, prompts.data(), prompt_offsets.data(), gen_rows, &go, out_tokens.data(),
                                                      out_logp.data(), lengths.data(), truncated.data());
  const double gen_s = seconds_since(start);
  const double roof = gen_rows / (4.0 * params / 4.8e12);  // float32 weights read once per decoding step at 4.8 TB/s
  std::printf("  generation, %lld rows x %lld new tokens: %.0f tokens/s (HBM roof of float32 decoding %.0f tokens/s)%s\n",
              static_cast<long long>(gen_rows), static_cast<long long>(new_tokens), gen_rows * new_tokens / gen_s, roof,
              status == GRPO_OK ? "" : " FAILED");
  grpo_cuda_model_destroy(m);
}

}  // namespace grpo::cuda
