// Shape of a Llama/Qwen-family decoder (the fields of a Hugging Face config.json that matter).
#pragma once

#include <cstdint>

#include "grpo/model.h"

namespace grpo::model {

// Hugging Face rope_scaling (native/model/rope.cc turns it into frequencies and the cos/sin scale).
struct RopeScaling {
  grpo_rope_type type = GRPO_ROPE_DEFAULT;
  double factor = 1, low_freq_factor = 1, high_freq_factor = 4, beta_fast = 32, beta_slow = 1;
  double mscale = 0, mscale_all_dim = 0, attention_factor = 0;  // attention_factor 0: derived
  int64_t original_max_positions = 0;
  bool truncate = true;
};

struct Config {
  int64_t vocab = 0, hidden = 0, intermediate = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, max_positions = 0;
  float eps = 1e-6f, rope_theta = 10000.0f;
  RopeScaling rope_scaling;
  bool tie_embeddings = false, qkv_bias = false, qk_norm = false;
  bool bf16_matmuls = false;  // a run-time choice, not part of the shape: dense layers multiply in bfloat16

  int64_t q_dim() const { return heads * head_dim; }
  int64_t kv_dim() const { return kv_heads * head_dim; }
};

// Checks every field (GRPO_ERR_VALUE_RANGE naming the field) and converts from the C ABI structs (rope NULL: plain RoPE).
Config make_config(const grpo_model_config& c, const grpo_rope_scaling* rope = nullptr);

}  // namespace grpo::model
