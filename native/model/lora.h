// LoRA adapters (PEFT's LoRA) on the linear layers of every decoder layer:
//   y = x·Wᵀ + b + scale · dropout(x)·Aᵀ·Bᵀ,   A [r, in], B [out, r]
// The adapters live in their own flat buffer (the same Layout type as the base's parameters), with their gradients
// and AdamW moments; the base keeps none. Dropout masks are counter-based (counter_rng.h), so the backward redraws
// the forward's mask instead of storing it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "config.h"
#include "grpo/model.h"
#include "params.h"

namespace grpo::model {

// Target modules in PEFT's order (LORA_TARGET_MODULES in lib/options/lora.ts); bit m of grpo_lora_config.targets.
enum LoraModule { kLoraQ, kLoraK, kLoraV, kLoraO, kLoraGate, kLoraUp, kLoraDown, kLoraModules };

// The adapter of one linear layer in one call.
struct Adapter {
  const float *A = nullptr, *B = nullptr;  // [r, in], [out, r]; A null: the layer has no adapter in this call
  float *dA = nullptr, *dB = nullptr;      // gradients, same shapes (backward only)
  int64_t rank = 0;
  float scale = 0, dropout = 0;            // dropout 0: none (inference, or lora_dropout 0)
  uint64_t seed = 0, stream = 0;           // this module's dropout mask in this training forward
};

// An adapter and the buffer of u = dropout(x)·Aᵀ [T, r] that its forward writes and its backward reads.
struct LoraSite {
  const Adapter* adapter = nullptr;
  float* u = nullptr;
};

// y [T, out] += scale · (dropout(x) · Aᵀ) · Bᵀ, writing u [T, r].
void adapter_forward(const Adapter& a, const float* x, int64_t T, int64_t in, int64_t out, float* u, float* y);

// dB += scale · dyᵀ·u;  dA += (scale · dy·B)ᵀ · dropout(x);  dx [T, in] += dropout'((scale · dy·B) · A) (dx may be null)
void adapter_backward(const Adapter& a, const float* x, const float* u, const float* dy, int64_t T, int64_t in, int64_t out,
                      float* dx);

using LayerAdapters = std::array<Adapter, kLoraModules>;

struct Lora {
  grpo_lora_config settings{};
  Layout layout;                                      // lora_A / lora_B of each (layer, target module)
  std::vector<float> params, grads, adam_m, adam_v;   // [layout.total] each (moments allocated on the first step)
  std::vector<std::array<int64_t, kLoraModules>> a_offset, b_offset;  // [layers]; -1: not a target
  bool enabled = true;
  int64_t forwards = 0;                               // training forwards since the last optimizer step
};

// Checks the settings (GRPO_ERR_VALUE_RANGE naming the field); A from kaiming-uniform keyed by the seed, B zero.
Lora make_lora(const Config& c, const grpo_lora_config& settings);

// The dropout key of a training forward: the `forwards`-th since optimizer step `step`.
uint64_t lora_forward_key(const Lora& l, int64_t step);

// The adapters of layer `layer`: in training with the dropout of the forward keyed `key`; with `grads` (the adapters'
// gradient buffer, or null), their gradient pointers.
LayerAdapters layer_adapters(const Lora& l, int64_t layer, bool train, uint64_t key, float* grads);

}  // namespace grpo::model
