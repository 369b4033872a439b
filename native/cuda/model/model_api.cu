// The C ABI of the built-in model (grpo/model.h) on the GPU: the argument checks shared with the CPU model
// (model_api_checks.h), then the device model. Host copies happen only here (tensors, optimizer state) and in
// score / logits / generate (tokens in, results out).
#include <algorithm>
#include <memory>
#include <vector>

#include "config.h"
#include "grpo/model.h"
#include "linear.cuh"
#include "model.cuh"
#include "model_api_checks.h"
#include "pack.h"

struct grpo_model {
  grpo::cuda::model::Model impl;
};

namespace {

using grpo::model::need;

const grpo::model::TensorSlot& slot_of(const grpo_model* model, const char* name, int64_t numel) {
  need(model, "model");
  return grpo::model::slot_of(model->impl.layout, name, numel);
}

void copy(void* dst, const void* src, int64_t floats, cudaMemcpyKind kind) {
  if (floats > 0) grpo::cuda::check(cudaMemcpy(dst, src, sizeof(float) * floats, kind), "cudaMemcpy");
}

}  // namespace

extern "C" {

grpo_status grpo_model_create_scaled(const grpo_model_config* config, const grpo_rope_scaling* rope, grpo_model** out) {
  return grpo::guarded([&] {
    need(config, "config");
    need(out, "out");
    const grpo::model::Config c = grpo::model::make_config(*config, rope);
    *out = new grpo_model{grpo::cuda::model::Model(c)};
  });
}

grpo_status grpo_model_create(const grpo_model_config* config, grpo_model** out) { return grpo_model_create_scaled(config, nullptr, out); }

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
    std::unique_ptr<grpo_model> copy(new grpo_model{grpo::cuda::model::Model(model->impl.config)});
    copy->impl.params.copy_from(model->impl.params);  // may fail (device memory): the copy is then freed
    *out = copy.release();
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
    grpo::model::tensor_info(model->impl.layout, index, name, ndim, shape);
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
    grpo::model::check_tensor_values(name, values, numel);
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
    grpo::model::check_score_args(model, tokens, seq_offsets, targets, options, logp);
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
    grpo::model::check_set_optimizer(m, v, step);
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
    grpo::model::check_generate_args(model, prompts, prompt_offsets, options, out_tokens, out_logp, out_lengths, truncated);
    grpo::cuda::model::generate(model->impl, prompts, prompt_offsets, nseq, *options, out_tokens, out_logp, out_lengths,
                                truncated);
  });
}

}  // extern "C"
