// The C ABI of the built-in model (grpo/model.h): argument checks, then the C++ model.
#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "adamw.h"
#include "generate.h"
#include "grpo/model.h"
#include "linear.h"
#include "model.h"
#include "model_api_checks.h"
#include "runtime/dtype16.h"
#include "runtime/error.h"

struct grpo_model {
  grpo::model::Model impl;
};

namespace {

using grpo::model::need;

// Where the named tensor lives: a base parameter in float32 (or in 16 bits, a frozen base), or an adapter's A or B.
struct TensorData {
  float* f32;
  uint16_t* bits16;
};

TensorData tensor_data(grpo_model* model, const char* name, int64_t numel) {
  need(model, "model");
  need(name, "name");
  auto& m = model->impl;
  if (m.lora && m.lora->layout.find(name)) return {m.lora->params.data() + grpo::model::slot_of(m.lora->layout, name, numel).offset, nullptr};
  const auto& slot = grpo::model::slot_of(m.layout, name, numel);
  if (slot.offset16 >= 0) return {nullptr, m.base16.data() + slot.offset16};
  return {m.params.data() + slot.offset, nullptr};
}

// The 16-bit type of grpo_lora_config.base16, or false for GRPO_BASE16_NONE.
bool base16_dtype(int32_t base16, grpo::Dtype16* dtype) {
  if (base16 == GRPO_BASE16_NONE) return false;
  if (base16 != GRPO_BASE16_BF16 && base16 != GRPO_BASE16_F16)
    grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "base16 must be GRPO_BASE16_NONE, GRPO_BASE16_BF16 or GRPO_BASE16_F16 (got %d)", base16);
  *dtype = base16 == GRPO_BASE16_BF16 ? grpo::Dtype16::bf16 : grpo::Dtype16::f16;
  return true;
}

// GRPO_ERR_VALUE_RANGE where a value of the tensor rounds to Infinity in `dtype` (beyond float16's ±65504).
void check_fits16(grpo::Dtype16 dtype, const std::string& name, const float* values, int64_t numel) {
  for (int64_t i = 0; i < numel; ++i)
    if (!grpo::finite16(dtype, grpo::round16(dtype, values[i])))
      grpo::fail(GRPO_ERR_VALUE_RANGE, "tensor \"%s\" element %lld (%g) is beyond the %s range of the frozen base", name.c_str(),
                 static_cast<long long>(i), static_cast<double>(values[i]), grpo::dtype16_name(dtype));
}

// bits[0, numel) = values rounded to `dtype`; refused, nothing written, where one does not fit.
void set_bits16(grpo::Dtype16 dtype, const char* name, const float* values, int64_t numel, uint16_t* bits) {
  check_fits16(dtype, name, values, numel);
  for (int64_t i = 0; i < numel; ++i) bits[i] = grpo::round16(dtype, values[i]);
}

grpo::model::Lora& lora_of(grpo_model* model) {
  need(model, "model");
  if (!model->impl.lora) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "the model has no LoRA adapters (grpo_model_lora_attach)");
  return *model->impl.lora;
}

}  // namespace

extern "C" {

grpo_status grpo_model_create_scaled(const grpo_model_config* config, const grpo_rope_scaling* rope, grpo_model** out) {
  return grpo::guarded([&] {
    need(config, "config");
    need(out, "out");
    *out = new grpo_model{grpo::model::Model(grpo::model::make_config(*config, rope))};
  });
}

grpo_status grpo_model_create(const grpo_model_config* config, grpo_model** out) { return grpo_model_create_scaled(config, nullptr, out); }

grpo_status grpo_model_init(grpo_model* model, uint64_t seed) {
  return grpo::guarded([&] {
    need(model, "model");
    if (!model->impl.base16.empty())
      grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "the frozen base keeps its matrices in %s (base16): set its tensors instead",
                 grpo::dtype16_name(model->impl.base16_dtype));
    grpo::model::init_parameters(model->impl.layout, seed, model->impl.params.data());
  });
}

grpo_status grpo_model_clone(const grpo_model* model, grpo_model** out) {
  return grpo::guarded([&] {
    need(model, "model");
    need(out, "out");
    *out = new grpo_model{grpo::model::Model(model->impl)};
  });
}

void grpo_model_destroy(grpo_model* model) { delete model; }

int64_t grpo_model_num_parameters(const grpo_model* model) {
  return model ? model->impl.layout.total + static_cast<int64_t>(model->impl.base16.size()) : 0;
}

int64_t grpo_model_num_tensors(const grpo_model* model) {
  return model ? static_cast<int64_t>(model->impl.layout.slots.size()) : 0;
}

grpo_status grpo_model_tensor_info(const grpo_model* model, int64_t index, const char** name, int64_t* ndim, int64_t shape[2]) {
  return grpo::guarded([&] {
    need(model, "model");
    grpo::model::tensor_info(model->impl.layout, index, name, ndim, shape);
  });
}

grpo_status grpo_model_get_tensor(const grpo_model* model, const char* name, float* out, int64_t numel) {
  return grpo::guarded([&] {
    const TensorData data = tensor_data(const_cast<grpo_model*>(model), name, numel);
    need(out, "out");
    if (data.f32) std::memcpy(out, data.f32, sizeof(float) * numel);
    else for (int64_t i = 0; i < numel; ++i) out[i] = grpo::widen16(model->impl.base16_dtype, data.bits16[i]);
  });
}

grpo_status grpo_model_set_tensor(grpo_model* model, const char* name, const float* values, int64_t numel) {
  return grpo::guarded([&] {
    const TensorData data = tensor_data(model, name, numel);
    grpo::model::check_tensor_values(name, values, numel);
    if (data.f32) std::memcpy(data.f32, values, sizeof(float) * numel);
    else set_bits16(model->impl.base16_dtype, name, values, numel, data.bits16);
  });
}

grpo_status grpo_model_set_bf16_matmuls(grpo_model* model, int32_t enabled) {
  return grpo::guarded([&] {
    need(model, "model");
    model->impl.config.bf16_matmuls = enabled != 0;
  });
}

grpo_status grpo_model_set_recompute(grpo_model* model, int32_t enabled) {
  return grpo::guarded([&] {
    need(model, "model");
    auto& ts = model->impl.train;
    if (ts.recompute != (enabled != 0)) ts.ready = false;  // the last training score kept the other kind of state
    ts.recompute = enabled != 0;
  });
}

grpo_status grpo_model_score(grpo_model* model, const int32_t* tokens, const int64_t* seq_offsets, int64_t nseq,
                             const int32_t* targets, const grpo_score_options* options, int32_t train, float* logp,
                             float* entropy) {
  return grpo::guarded([&] {
    grpo::model::check_score_args(model, tokens, seq_offsets, targets, options, logp);
    auto& m = model->impl;
    if (nseq >= 1) need(seq_offsets, "seq_offsets");
    const auto tl = grpo::model::pack_sequences(m.config, tokens, seq_offsets, nseq);
    grpo::model::score(m, tokens, tl, targets, *options, train != 0, logp, entropy);
  });
}

grpo_status grpo_model_logits(grpo_model* model, const int32_t* tokens, const int64_t* seq_offsets, int64_t nseq, float* logits) {
  return grpo::guarded([&] {
    need(model, "model");
    need(tokens, "tokens");
    need(seq_offsets, "seq_offsets");
    need(logits, "logits");
    auto& m = model->impl;
    const auto tl = grpo::model::pack_sequences(m.config, tokens, seq_offsets, nseq);
    std::vector<float> hidden;
    grpo::model::forward_hidden(m, tokens, tl, nullptr, nullptr, hidden);
    m.release_work();
    grpo::model::linear_forward(hidden.data(), m.p.lm_head, nullptr, tl.T, m.config.hidden, m.config.vocab, logits, false);
  });
}

grpo_status grpo_model_backward(grpo_model* model, const float* grad_logp, const float* grad_entropy) {
  return grpo::guarded([&] {
    need(model, "model");
    need(grad_logp, "grad_logp");
    grpo::model::backward(model->impl, grad_logp, grad_entropy);
  });
}

grpo_status grpo_model_zero_grad(grpo_model* model) {
  return grpo::guarded([&] {
    need(model, "model");
    auto& m = model->impl;
    m.ensure_grads();
    auto& grads = m.lora ? m.lora->grads : m.grads;
    std::fill(grads.begin(), grads.end(), 0.0f);
  });
}

grpo_status grpo_model_adamw_step(grpo_model* model, const grpo_adamw_options* options, float* grad_norm) {
  return grpo::guarded([&] {
    need(model, "model");
    need(options, "options");
    const float norm = grpo::model::adamw_step(model->impl, *options);
    if (grad_norm) *grad_norm = norm;
  });
}

grpo_status grpo_model_get_optimizer(const grpo_model* model, float* m, float* v, int64_t* step) {
  return grpo::guarded([&] {
    need(model, "model");
    const auto& impl = model->impl;
    const size_t n = impl.params.size();
    if (m) impl.adam_m.empty() ? std::fill(m, m + n, 0.0f) : void(std::copy(impl.adam_m.begin(), impl.adam_m.end(), m));
    if (v) impl.adam_v.empty() ? std::fill(v, v + n, 0.0f) : void(std::copy(impl.adam_v.begin(), impl.adam_v.end(), v));
    if (step) *step = impl.step;
  });
}

grpo_status grpo_model_set_optimizer(grpo_model* model, const float* m, const float* v, int64_t step) {
  return grpo::guarded([&] {
    need(model, "model");
    grpo::model::check_set_optimizer(m, v, step);
    auto& impl = model->impl;
    impl.adam_m.assign(m, m + impl.params.size());
    impl.adam_v.assign(v, v + impl.params.size());
    impl.step = step;
  });
}

grpo_status grpo_model_lora_attach(grpo_model* model, const grpo_lora_config* config) {
  return grpo::guarded([&] {
    need(model, "model");
    need(config, "config");
    auto& m = model->impl;
    if (m.lora) grpo::fail(GRPO_ERR_INVALID_ARGUMENT, "the model already has LoRA adapters");
    grpo::Dtype16 dtype;
    const bool keep16 = base16_dtype(config->base16, &dtype);
    auto lora = std::make_unique<grpo::model::Lora>(grpo::model::make_lora(m.config, *config));
    if (keep16) {  // checked first: a refused attach leaves the model as it was
      for (const auto& s : m.layout.slots)
        if (grpo::model::Model::dense_layer_matrix(s)) check_fits16(dtype, s.name, m.params.data() + s.offset, s.size());
      m.keep_dense_in_16_bits(dtype);
    }
    m.lora = std::move(lora);
    // the base is frozen from now on: its gradients and moments go
    for (auto* buffer : {&m.grads, &m.adam_m, &m.adam_v}) std::vector<float>().swap(*buffer);
    m.g = {};
    m.step = 0;
    m.train.ready = false;
  });
}

grpo_status grpo_model_lora_set_enabled(grpo_model* model, int32_t enabled) {
  return grpo::guarded([&] {
    lora_of(model).enabled = enabled != 0;
    model->impl.train.ready = false;  // a backward must see the adapters of its own forward
  });
}

int64_t grpo_model_lora_num_parameters(const grpo_model* model) {
  return model && model->impl.lora ? model->impl.lora->layout.total : 0;
}

grpo_status grpo_model_lora_get_optimizer(const grpo_model* model, float* m, float* v, int64_t* step) {
  return grpo::guarded([&] {
    const auto& l = lora_of(const_cast<grpo_model*>(model));
    const size_t n = l.params.size();
    if (m) l.adam_m.empty() ? std::fill(m, m + n, 0.0f) : void(std::copy(l.adam_m.begin(), l.adam_m.end(), m));
    if (v) l.adam_v.empty() ? std::fill(v, v + n, 0.0f) : void(std::copy(l.adam_v.begin(), l.adam_v.end(), v));
    if (step) *step = model->impl.step;
  });
}

grpo_status grpo_model_lora_set_optimizer(grpo_model* model, const float* m, const float* v, int64_t step) {
  return grpo::guarded([&] {
    auto& l = lora_of(model);
    grpo::model::check_set_optimizer(m, v, step);
    l.adam_m.assign(m, m + l.params.size());
    l.adam_v.assign(v, v + l.params.size());
    l.forwards = 0;
    model->impl.step = step;
  });
}

grpo_status grpo_model_generate(grpo_model* model, const int32_t* prompts, const int64_t* prompt_offsets, int64_t nseq,
                                const grpo_generate_options* options, int32_t* out_tokens, float* out_logp,
                                int64_t* out_lengths, uint8_t* truncated) {
  return grpo::guarded([&] {
    grpo::model::check_generate_args(model, prompts, prompt_offsets, options, out_tokens, out_logp, out_lengths, truncated);
    grpo::model::generate(model->impl, prompts, prompt_offsets, nseq, *options, out_tokens, out_logp, out_lengths, truncated);
#ifdef __GLIBC__
    // The freed KV cache goes back to the system: the next call (the next row chunk of Policy.generate maxRows) may
    // run on another thread, whose malloc arena would not reuse these pages, and the chunks' caches would add up.
    malloc_trim(0);
#endif
  });
}

}  // extern "C"
