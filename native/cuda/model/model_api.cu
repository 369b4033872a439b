// The C ABI of the built-in model (grpo/model.h) on the GPU: the argument checks of native/model/model_api.cc,
// then the device model. Host copies happen only here (tensors, optimizer state) and in score / logits /
// generate (tokens in, results out).
#include <cmath>
#include <vector>

#include "config.h"
#include "grpo/model.h"
#include "linear.cuh"
#include "model.cuh"
#include "pack.h"

struct grpo_model {
  grpo::cuda::model::Model impl;
};

namespace {

using grpo::fail;

void need(const void* pointer, const char* name) {
  if (!pointer) fail(GRPO_ERR_INVALID_ARGUMENT, "%s must not be NULL", name);
}

const grpo::model::TensorSlot& slot_of(const grpo_model* model, const char* name, int64_t numel) {
  need(model, "model");
  need(name, "name");
  const grpo::model::TensorSlot* slot = model->impl.layout.find(name);
  if (!slot) fail(GRPO_ERR_INVALID_ARGUMENT, "the model has no tensor named \"%s\"", name);
  if (slot->size() != numel)
    fail(GRPO_ERR_SHAPE, "tensor \"%s\" has %lld elements, got a buffer of %lld", name, static_cast<long long>(slot->size()),
         static_cast<long long>(numel));
  return *slot;
}

void copy(void* dst, const void* src, int64_t floats, cudaMemcpyKind kind) {
  if (floats > 0) grpo::cuda::check(cudaMemcpy(dst, src, sizeof(float) * floats, kind), "cudaMemcpy");
}

}  // namespace

extern "C" {

grpo_status grpo_model_create(const grpo_model_config* config, grpo_model** out) {
  return grpo::guarded([&] {
    need(config, "config");
    need(out, "out");
    const grpo::model::Config c = grpo::model::make_config(*config);
    *out = new grpo_model{grpo::cuda::model::Model(c)};
  });
}

grpo_status grpo_model_init(grpo_model* model, uint64_t seed) {
  return grpo::guarded([&] {
    need(model, "model");
    auto& m = model->impl;
    std::vector<float> host(static_cast<size_t>(m.layout.total));
    grpo::model::init_parameters(m.layout, seed, host.data());
    m.params.upload(host.data(), m.layout.total);
  });
}

grpo_status grpo_model_clone(const grpo_model* model, grpo_model** out) {
  return grpo::guarded([&] {
    need(model, "model");
    need(out, "out");
    auto* copy = new grpo_model{grpo::cuda::model::Model(model->impl.config)};
    copy->impl.params.copy_from(model->impl.params);
    *out = copy;
  });
}

void grpo_model_destroy(grpo_model* model) { delete model; }

int64_t grpo_model_num_parameters(const grpo_model* model) { return model ? model->impl.layout.total : 0; }

int64_t grpo_model_num_tensors(const grpo_model* model) {
  return model ? static_cast<int64_t>(model->impl.layout.slots.size()) : 0;
}

grpo_status grpo_model_tensor_info(const grpo_model* model, int64_t index, const char** name, int64_t* ndim, int64_t shape[2]) {
  return grpo::guarded([&] {
    need(model, "model");
    const auto& slots = model->impl.layout.slots;
    if (index < 0 || index >= static_cast<int64_t>(slots.size()))
      fail(GRPO_ERR_INDEX_RANGE, "tensor index %lld is outside [0, %zu)", static_cast<long long>(index), slots.size());
    const auto& s = slots[index];
    *name = s.name.c_str();
    *ndim = s.cols == 1 && !s.matrix ? 1 : 2;
    shape[0] = s.rows;
    shape[1] = s.cols;
  });
}

grpo_status grpo_model_get_tensor(const grpo_model* model, const char* name, float* out, int64_t numel) {
  return grpo::guarded([&] {
    const auto& slot = slot_of(model, name, numel);
    need(out, "out");
    copy(out, model->impl.params.get() + slot.offset, numel, cudaMemcpyDeviceToHost);
  });
}

grpo_status grpo_model_set_tensor(grpo_model* model, const char* name, const float* values, int64_t numel) {
  return grpo::guarded([&] {
    const auto& slot = slot_of(model, name, numel);
    need(values, "values");
    for (int64_t i = 0; i < numel; ++i)
      if (!std::isfinite(values[i])) fail(GRPO_ERR_NON_FINITE, "tensor \"%s\" element %lld is not finite", name, static_cast<long long>(i));
    copy(model->impl.params.get() + slot.offset, values, numel, cudaMemcpyHostToDevice);
  });
}

// The dense layers (q/k/v/o, MLP) then run the bf16 tensor-core GEMM on bf16-rounded inputs (layer.cu).
grpo_status grpo_model_set_bf16_matmuls(grpo_model* model, int32_t enabled) {
  return grpo::guarded([&] {
    need(model, "model");
    model->impl.config.bf16_matmuls = enabled != 0;
  });
}

grpo_status grpo_model_score(grpo_model* model, const int32_t* tokens, const int64_t* seq_offsets, int64_t nseq,
                             const int32_t* targets, const grpo_score_options* options, int32_t train, float* logp,
                             float* entropy) {
  return grpo::guarded([&] {
    for (const void* p : {static_cast<const void*>(model), static_cast<const void*>(tokens), static_cast<const void*>(seq_offsets),
                          static_cast<const void*>(targets), static_cast<const void*>(options), static_cast<const void*>(logp)})
      need(p, "model, tokens, seq_offsets, targets, options and logp");
    auto& m = model->impl;
    const auto tl = grpo::model::pack_sequences(m.config, tokens, seq_offsets, nseq);
    grpo::cuda::model::score(m, tokens, tl, targets, *options, train != 0, logp, entropy);
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
    int64_t longest = 0;
    for (const auto& s : tl.spans) longest = std::max(longest, s.len);
    m.ensure_rope(longest);
    grpo::cuda::model::TokenMap map;
    grpo::cuda::model::upload_map(tokens, tl, 0, map);
    grpo::cuda::model::DeviceArray<float> hidden, out(tl.T * m.config.vocab);
    grpo::cuda::model::forward_hidden(m, map, nullptr, nullptr, hidden);
    m.release_work();
    grpo::cuda::model::linear_forward(hidden.get(), m.p.lm_head, nullptr, tl.T, m.config.hidden, m.config.vocab, out.get());
    out.download(logits);
  });
}

grpo_status grpo_model_backward(grpo_model* model, const float* grad_logp, const float* grad_entropy) {
  return grpo::guarded([&] {
    need(model, "model");
    need(grad_logp, "grad_logp");
    grpo::cuda::model::backward(model->impl, grad_logp, grad_entropy);
  });
}

grpo_status grpo_model_zero_grad(grpo_model* model) {
  return grpo::guarded([&] {
    need(model, "model");
    model->impl.ensure_grads();
    model->impl.grads.assign_zero(model->impl.layout.total);
  });
}

grpo_status grpo_model_adamw_step(grpo_model* model, const grpo_adamw_options* options, float* grad_norm) {
  return grpo::guarded([&] {
    need(model, "model");
    need(options, "options");
    const float norm = grpo::cuda::model::adamw_step(model->impl, *options);
    if (grad_norm) *grad_norm = norm;
  });
}

grpo_status grpo_model_get_optimizer(const grpo_model* model, float* m, float* v, int64_t* step) {
  return grpo::guarded([&] {
    need(model, "model");
    const auto& impl = model->impl;
    const size_t n = static_cast<size_t>(impl.layout.total);
    for (auto [moment, out] : {std::pair{&impl.adam_m, m}, {&impl.adam_v, v}}) {
      if (!out) continue;
      if (moment->empty()) std::fill(out, out + n, 0.0f);
      else moment->download(out);
    }
    if (step) *step = impl.step;
  });
}

grpo_status grpo_model_set_optimizer(grpo_model* model, const float* m, const float* v, int64_t step) {
  return grpo::guarded([&] {
    need(model, "model");
    need(m, "m");
    need(v, "v");
    if (step < 0) fail(GRPO_ERR_VALUE_RANGE, "step must be >= 0 (got %lld)", static_cast<long long>(step));
    auto& impl = model->impl;
    impl.adam_m.upload(m, impl.layout.total);
    impl.adam_v.upload(v, impl.layout.total);
    impl.step = step;
  });
}

grpo_status grpo_model_generate(grpo_model* model, const int32_t* prompts, const int64_t* prompt_offsets, int64_t nseq,
                                const grpo_generate_options* options, int32_t* out_tokens, float* out_logp,
                                int64_t* out_lengths, uint8_t* truncated) {
  return grpo::guarded([&] {
    for (const void* p : {static_cast<const void*>(model), static_cast<const void*>(prompts), static_cast<const void*>(prompt_offsets),
                          static_cast<const void*>(options), static_cast<const void*>(out_tokens), static_cast<const void*>(out_logp),
                          static_cast<const void*>(out_lengths), static_cast<const void*>(truncated)})
      need(p, "model, prompts, prompt_offsets, options and the outputs");
    const auto& o = *options;
    if (o.max_new_tokens < 0) fail(GRPO_ERR_VALUE_RANGE, "max_new_tokens must be >= 0 (got %lld)", static_cast<long long>(o.max_new_tokens));
    need(o.sampling, "options->sampling (the sampler's parameters are checked on the first step)");
    if (o.num_stop_tokens > 0) need(o.stop_tokens, "stop_tokens");
    grpo::cuda::model::generate(model->impl, prompts, prompt_offsets, nseq, o, out_tokens, out_logp, out_lengths, truncated);
  });
}

}  // extern "C"
