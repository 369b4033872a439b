// Where each Hugging Face tensor lives in the model's one flat float32 buffer. The same layout
// addresses the parameters, their gradients and the AdamW moments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config.h"
#include "runtime/dtype16.h"

namespace grpo::model {

struct TensorSlot {
  std::string name;
  int64_t rows, cols;  // cols = 1 for vectors (ndim 1)
  int64_t offset;
  bool matrix;         // weight matrices and embeddings: initialised N(0, 0.02²), decayed by AdamW
  bool norm;           // RMSNorm weights: initialised to 1
  int64_t offset16 = -1;  // >= 0: kept in 16 bits at this offset of Model::base16 (a frozen LoRA base), not in params
  int64_t size() const { return rows * cols; }
};

struct Layout {
  std::vector<TensorSlot> slots;
  int64_t total = 0;
  const TensorSlot* find(const std::string& name) const;
};

Layout make_layout(const Config& c);

// Pointers of one decoder layer inside a buffer with the layout above (biases null without qkv_bias; tensors kept
// in 16 bits null too).
struct LayerTensors {
  float *attn_norm, *wq, *bq, *wk, *bk, *wv, *bv, *wo, *mlp_norm, *w_gate, *w_up, *w_down;
  float *q_norm, *k_norm;  // [head_dim] each, null without qk_norm
  // The dense matrices kept in 16 bits of type dtype16 instead (their float pointers above then null), in the order
  // q, k, v, o, gate, up, down (lora.h's LoraModule); null when they are float32.
  const uint16_t* dense16[7] = {};
  Dtype16 dtype16 = Dtype16::bf16;
};

struct ModelTensors {
  float* embed;    // [vocab, hidden]
  float* lm_head;  // [vocab, hidden] (== embed when tied)
  float* final_norm;
  std::vector<LayerTensors> layers;
};

ModelTensors bind(const Config& c, const Layout& layout, float* base);

// Deterministic initialisation from a seed (counter-based, independent of thread count).
void init_parameters(const Layout& layout, uint64_t seed, float* base);

}  // namespace grpo::model
