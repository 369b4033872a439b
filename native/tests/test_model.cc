// The built-in decoder: finite-difference gradients of every tensor (so every layer: embedding,
// RMSNorm, rotary attention with GQA (plain and YaRN-scaled), biases and per-head q/k norms, SwiGLU, final norm, LM head) on
// tiny configs, bitwise determinism across thread counts, AdamW against its formula, and the LoRA C ABI's checks.
#include <cmath>
#include <string>
#include <vector>

#include "check.h"
#include "grpo/model.h"
#include "runtime/bf16.h"
#include "runtime/f16.h"

namespace {

grpo_model_config tiny(bool tied, bool bias, bool qk_norm = false) {
  return {13, 8, 12, 2, 4, 2, qk_norm ? 4 : 2, 16, 1e-5f, 10000.0f, tied ? 1 : 0, bias ? 1 : 0, qk_norm ? 1 : 0};
}

// YaRN on head_dim 4 over an original context of 4 positions: the 6-token sequence reaches the interpolated
// frequencies, and cos/sin carry the attention factor 0.1·ln 4 + 1 (its backward scales too).
grpo_rope_scaling yarn() {
  grpo_rope_scaling r{};
  r.type = GRPO_ROPE_YARN;
  r.factor = 4.0f;
  r.original_max_position_embeddings = 4;
  r.beta_fast = 32.0f;
  r.beta_slow = 1.0f;
  r.truncate = 1;
  return r;
}

struct Batch {
  std::vector<int32_t> tokens{1, 5, 7, 2, 9, 3, 12, 0, 4, 6, 11};
  std::vector<int64_t> offsets{0, 6, 11};
  std::vector<int32_t> targets{5, 7, 2, 9, 3, -100, 0, 4, 6, 11, 8};
  std::vector<float> w_logp = grpo::test::random_floats(11, 1.0f, 7), w_entropy = grpo::test::random_floats(11, 1.0f, 8);
};

// Loss = Σ w_logp·logp + Σ w_entropy·entropy, in double from the float outputs.
double loss(grpo_model* m, const Batch& b, bool train) {
  std::vector<float> logp(b.tokens.size()), entropy(b.tokens.size());
  grpo_score_options o{1.0f, -100};
  CHECK(grpo_model_score(m, b.tokens.data(), b.offsets.data(), 2, b.targets.data(), &o, train, logp.data(), entropy.data()) == GRPO_OK);
  double total = 0.0;
  for (size_t t = 0; t < logp.size(); ++t) total += b.w_logp[t] * logp[t] + b.w_entropy[t] * entropy[t];
  return total;
}

grpo_model* randomised(const grpo_model_config& config, const grpo_rope_scaling* rope = nullptr) {
  grpo_model* m = nullptr;
  CHECK(grpo_model_create_scaled(&config, rope, &m) == GRPO_OK);
  CHECK(grpo_model_init(m, 42) == GRPO_OK);
  for (int64_t i = 0; i < grpo_model_num_tensors(m); ++i) {
    const char* name;
    int64_t ndim, shape[2];
    grpo_model_tensor_info(m, i, &name, &ndim, shape);
    auto values = grpo::test::random_floats(shape[0] * shape[1], 0.4f, 100 + static_cast<uint32_t>(i));
    if (std::string(name).find("norm") != std::string::npos)
      for (auto& v : values) v += 1.0f;
    CHECK(grpo_model_set_tensor(m, name, values.data(), shape[0] * shape[1]) == GRPO_OK);
  }
  return m;
}

// Analytic gradient of tensor `index` (read back through a parameter probe) vs central differences.
void gradients_match_finite_differences(const grpo_model_config& config, const grpo_rope_scaling* rope = nullptr) {
  Batch b;
  grpo_model* m = randomised(config, rope);
  const int64_t P = grpo_model_num_parameters(m);
  loss(m, b, true);
  CHECK(grpo_model_zero_grad(m) == GRPO_OK);
  loss(m, b, true);
  CHECK(grpo_model_backward(m, b.w_logp.data(), b.w_entropy.data()) == GRPO_OK);
  // Read the gradient out as the AdamW first moment with beta1 = 0 and lr = 0: m = grad.
  grpo_adamw_options probe{0.0f, 0.0f, 0.5f, 1e-8f, 0.0f, 0.0f};
  CHECK(grpo_model_adamw_step(m, &probe, nullptr) == GRPO_OK);
  std::vector<float> grad(P), v(P);
  int64_t step;
  grpo_model_get_optimizer(m, grad.data(), v.data(), &step);
  int64_t offset = 0;
  for (int64_t i = 0; i < grpo_model_num_tensors(m); ++i) {
    const char* name;
    int64_t ndim, shape[2];
    grpo_model_tensor_info(m, i, &name, &ndim, shape);
    const int64_t n = shape[0] * shape[1];
    std::vector<float> values(n);
    grpo_model_get_tensor(m, name, values.data(), n);
    for (int64_t e : {int64_t{0}, n / 2, n - 1}) {
      const float saved = values[e], h = 2e-3f;
      values[e] = saved + h;
      grpo_model_set_tensor(m, name, values.data(), n);
      const double up = loss(m, b, false);
      values[e] = saved - h;
      grpo_model_set_tensor(m, name, values.data(), n);
      const double down = loss(m, b, false);
      values[e] = saved;
      grpo_model_set_tensor(m, name, values.data(), n);
      const double numeric = (up - down) / (2.0 * h);
      if (std::fabs(grad[offset + e] - numeric) > 2e-3 + 2e-2 * std::fabs(numeric)) {
        std::fprintf(stderr, "%s[%lld]: analytic %.6g, numeric %.6g\n", name, static_cast<long long>(e), grad[offset + e], numeric);
        ++grpo::test::failures();
      }
    }
    offset += n;
  }
  grpo_model_destroy(m);
}

std::vector<float> all_params(grpo_model* m, std::vector<bool>* decayed) {
  std::vector<float> out;
  for (int64_t i = 0; i < grpo_model_num_tensors(m); ++i) {
    const char* name;
    int64_t ndim, shape[2];
    grpo_model_tensor_info(m, i, &name, &ndim, shape);
    std::vector<float> values(shape[0] * shape[1]);
    grpo_model_get_tensor(m, name, values.data(), static_cast<int64_t>(values.size()));
    out.insert(out.end(), values.begin(), values.end());
    if (decayed) decayed->insert(decayed->end(), values.size(), ndim == 2);
  }
  return out;
}

// One AdamW step from zero moments: p ← p − lr·wd·p (matrices only) − lr·m̂ / (√v̂ + eps), m̂ = g, v̂ = g².
void adamw_matches_formula() {
  Batch b;
  grpo_model* m = randomised(tiny(false, true));
  std::vector<bool> decayed;
  const std::vector<float> before = all_params(m, &decayed);
  loss(m, b, true);
  grpo_model_backward(m, b.w_logp.data(), b.w_entropy.data());
  grpo_adamw_options probe{0.0f, 0.0f, 0.5f, 1e-8f, 0.0f, 0.0f};
  grpo_model_adamw_step(m, &probe, nullptr);  // lr 0: reads the gradient out as the first moment
  std::vector<float> grad(before.size()), v(before.size());
  int64_t step;
  grpo_model_get_optimizer(m, grad.data(), v.data(), &step);
  std::vector<float> zeros(before.size(), 0.0f);
  grpo_model_set_optimizer(m, zeros.data(), zeros.data(), 0);
  loss(m, b, true);
  grpo_model_backward(m, b.w_logp.data(), b.w_entropy.data());
  const grpo_adamw_options o{0.05f, 0.9f, 0.99f, 1e-3f, 0.2f, 0.0f};
  CHECK(grpo_model_adamw_step(m, &o, nullptr) == GRPO_OK);
  const std::vector<float> after = all_params(m, nullptr);
  std::vector<double> expected(before.size());
  for (size_t i = 0; i < before.size(); ++i)
    expected[i] = before[i] - (decayed[i] ? o.lr * o.weight_decay * before[i] : 0.0) -
                  o.lr * grad[i] / (std::fabs(static_cast<double>(grad[i])) + o.eps);
  grpo::test::close("adamw", after.data(), expected.data(), after.size(), 1e-5, 1e-4);
  grpo_model_destroy(m);
}

std::vector<float> trained_params(int threads) {
  grpo_set_num_threads(threads);
  Batch b;
  grpo_model* m = randomised(tiny(false, true));
  grpo_adamw_options o{1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f, 1.0f};
  for (int s = 0; s < 3; ++s) {
    loss(m, b, true);
    grpo_model_backward(m, b.w_logp.data(), b.w_entropy.data());
    grpo_model_adamw_step(m, &o, nullptr);
  }
  std::vector<float> m1(grpo_model_num_parameters(m)), v1(m1.size());
  int64_t step;
  grpo_model_get_optimizer(m, m1.data(), v1.data(), &step);
  grpo_model_destroy(m);
  return m1;
}

void same_bits_for_any_thread_count() { CHECK(trained_params(1) == trained_params(2)); }

void bad_input_is_rejected() {
  grpo_model_config bad = tiny(false, false);
  bad.num_key_value_heads = 3;
  grpo_model* m = nullptr;
  CHECK(grpo_model_create(&bad, &m) == GRPO_ERR_VALUE_RANGE);
  const grpo_model_config good_shape = tiny(false, false);
  grpo_rope_scaling bad_rope = yarn();
  bad_rope.factor = 0.5f;
  CHECK(grpo_model_create_scaled(&good_shape, &bad_rope, &m) == GRPO_ERR_VALUE_RANGE);
  bad_rope.type = 9;
  CHECK(grpo_model_create_scaled(&good_shape, &bad_rope, &m) == GRPO_ERR_VALUE_RANGE);
  grpo_model_config good = tiny(false, false);
  CHECK(grpo_model_create(&good, &m) == GRPO_OK);
  std::vector<int32_t> tokens{1, 99}, targets{-100, -100};
  std::vector<int64_t> offsets{0, 2};
  std::vector<float> logp(2);
  grpo_score_options o{1.0f, -100};
  CHECK(grpo_model_score(m, tokens.data(), offsets.data(), 1, targets.data(), &o, 0, logp.data(), nullptr) == GRPO_ERR_INDEX_RANGE);
  std::vector<int32_t> longer(17, 1), t17(17, -100);
  std::vector<int64_t> off17{0, 17};
  std::vector<float> l17(17);
  CHECK(grpo_model_score(m, longer.data(), off17.data(), 1, t17.data(), &o, 0, l17.data(), nullptr) == GRPO_ERR_SHAPE);
  CHECK(grpo_model_backward(m, logp.data(), nullptr) == GRPO_ERR_INVALID_ARGUMENT);
  grpo_model_destroy(m);
}

// LoRA through the C ABI: settings checked, one attach per model, calls that need adapters refused without them, the
// adapter count, and B = 0 at attach leaves the log-probs bit for bit (the gradients are test/lora-policy.test.ts's).
void lora_is_checked() {
  Batch b;
  grpo_model* m = randomised(tiny(false, true));
  const double before = loss(m, b, false);
  for (grpo_lora_config bad : {grpo_lora_config{0, 2.0f, 0.0f, GRPO_LORA_Q, 1}, grpo_lora_config{5, 2.0f, 0.0f, GRPO_LORA_Q, 1},
                               grpo_lora_config{2, 0.0f, 0.0f, GRPO_LORA_Q, 1}, grpo_lora_config{2, 2.0f, 1.0f, GRPO_LORA_Q, 1},
                               grpo_lora_config{2, 2.0f, 0.0f, 0, 1}, grpo_lora_config{2, 2.0f, 0.0f, 128, 1}})
    CHECK(grpo_model_lora_attach(m, &bad) == GRPO_ERR_VALUE_RANGE);
  CHECK(grpo_model_lora_set_enabled(m, 0) == GRPO_ERR_INVALID_ARGUMENT);
  CHECK(grpo_model_lora_num_parameters(m) == 0);
  const grpo_lora_config good{2, 2.0f, 0.1f, GRPO_LORA_Q | GRPO_LORA_DOWN, 1};
  CHECK(grpo_model_lora_attach(m, &good) == GRPO_OK);
  CHECK(grpo_model_lora_attach(m, &good) == GRPO_ERR_INVALID_ARGUMENT);
  CHECK(grpo_model_lora_num_parameters(m) == 2 * ((2 * 8 + 8 * 2) + (2 * 12 + 8 * 2)));  // q: A [2, 8], B [8, 2]; down: A [2, 12], B [8, 2]
  CHECK(loss(m, b, false) == before);
  std::vector<float> a(16);
  CHECK(grpo_model_get_tensor(m, "model.layers.1.self_attn.q_proj.lora_A.weight", a.data(), 16) == GRPO_OK);
  for (float x : a) CHECK(std::fabs(x) <= 1.0f / std::sqrt(8.0f) && x != 0.0f);  // kaiming-uniform a = √5: U(−1/√in, 1/√in)
  CHECK(grpo_model_get_tensor(m, "model.layers.1.self_attn.k_proj.lora_A.weight", a.data(), 16) == GRPO_ERR_INVALID_ARGUMENT);
  grpo_model_destroy(m);
  // a base kept in bfloat16: the same parameter count and tensors (rounded), and no re-initialisation
  m = randomised(tiny(false, true));
  const int64_t P = grpo_model_num_parameters(m);
  const grpo_lora_config half{2, 2.0f, 0.0f, GRPO_LORA_V, 1, GRPO_BASE16_BF16};
  CHECK(grpo_model_lora_attach(m, &half) == GRPO_OK);
  CHECK(grpo_model_num_parameters(m) == P);
  std::vector<float> w(8 * 8), rounded(8 * 8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 1.0f + static_cast<float>(i) / 3.0f;
  CHECK(grpo_model_set_tensor(m, "model.layers.0.mlp.down_proj.weight", w.data(), 64) == GRPO_ERR_SHAPE);  // [8, 12]
  CHECK(grpo_model_set_tensor(m, "model.layers.0.self_attn.q_proj.weight", w.data(), 64) == GRPO_OK);
  CHECK(grpo_model_get_tensor(m, "model.layers.0.self_attn.q_proj.weight", rounded.data(), 64) == GRPO_OK);
  for (size_t i = 0; i < w.size(); ++i) CHECK(rounded[i] == grpo::bf16::round_float(w[i]));
  CHECK(grpo_model_init(m, 3) == GRPO_ERR_INVALID_ARGUMENT);
  grpo_model_destroy(m);
  // in float16: rounded to it, and a value beyond its range refused (the tensor left as it was)
  m = randomised(tiny(false, true));
  const grpo_lora_config f16{2, 2.0f, 0.0f, GRPO_LORA_V, 1, GRPO_BASE16_F16};
  CHECK(grpo_model_lora_attach(m, &f16) == GRPO_OK);
  CHECK(grpo_model_num_parameters(m) == P);
  CHECK(grpo_model_set_tensor(m, "model.layers.0.self_attn.q_proj.weight", w.data(), 64) == GRPO_OK);
  CHECK(grpo_model_get_tensor(m, "model.layers.0.self_attn.q_proj.weight", rounded.data(), 64) == GRPO_OK);
  for (size_t i = 0; i < w.size(); ++i) CHECK(rounded[i] == grpo::f16::widen(grpo::f16::round(w[i])));
  std::vector<float> huge = w;
  huge[9] = 65520.0f;
  CHECK(grpo_model_set_tensor(m, "model.layers.0.self_attn.q_proj.weight", huge.data(), 64) == GRPO_ERR_VALUE_RANGE);
  std::vector<float> after(64);
  CHECK(grpo_model_get_tensor(m, "model.layers.0.self_attn.q_proj.weight", after.data(), 64) == GRPO_OK);
  CHECK(after == rounded);
  grpo_model_destroy(m);
  // refused attaches leave the model without adapters: an unnamed base16, a float32 value float16 cannot hold
  m = randomised(tiny(false, true));
  const grpo_lora_config unnamed{2, 2.0f, 0.0f, GRPO_LORA_V, 1, 3};
  CHECK(grpo_model_lora_attach(m, &unnamed) == GRPO_ERR_INVALID_ARGUMENT);
  CHECK(grpo_model_set_tensor(m, "model.layers.1.mlp.up_proj.weight", std::vector<float>(12 * 8, 7e4f).data(), 12 * 8) == GRPO_OK);
  CHECK(grpo_model_lora_attach(m, &f16) == GRPO_ERR_VALUE_RANGE);
  CHECK(grpo_model_lora_num_parameters(m) == 0);
  CHECK(grpo_model_lora_attach(m, &half) == GRPO_OK);  // bfloat16 holds 7e4
  grpo_model_destroy(m);
}

}  // namespace

int main() {
  gradients_match_finite_differences(tiny(false, true, false));
  gradients_match_finite_differences(tiny(true, false, false));
  gradients_match_finite_differences(tiny(false, false, true));  // Qwen3: per-head q/k norms, head_dim != hidden / heads
  const grpo_rope_scaling scaled = yarn();
  gradients_match_finite_differences(tiny(false, false, true), &scaled);  // scaled RoPE frequencies and cos/sin
  adamw_matches_formula();
  same_bits_for_any_thread_count();
  bad_input_is_rejected();
  lora_is_checked();
  return grpo::test::report("test_model");
}
