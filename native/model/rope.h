// Rotary position embeddings, Hugging Face "rotate_half" layout: within each head, dimension i
// pairs with i + head_dim/2, rotated by angle pos · inv_freq[i] (theta^(-2i/head_dim), or its
// rope_scaling form) and scaled by attention_factor (YaRN's; 1 otherwise).
#pragma once

#include <cstdint>
#include <vector>

#include "config.h"

namespace grpo::model {

struct RopeTable {
  int64_t half = 0;
  std::vector<float> inv_freq;  // [head_dim / 2]
  float attention_factor = 1.0f;  // multiplies cos and sin (transformers' attention_scaling)
};

// The frequencies of transformers' ROPE_INIT_FUNCTIONS (modeling_rope_utils.py) for c.rope_scaling.
RopeTable make_rope(const Config& c);

// x [T, heads, head_dim] rotated in place by positions [T]; inverse = the backward (rotation by −angle).
void rope_apply(const RopeTable& rope, float* x, const int64_t* positions, int64_t T, int64_t heads, bool inverse);

}  // namespace grpo::model
