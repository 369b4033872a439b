// Rotary position embeddings, Hugging Face "rotate_half" layout: within each head, dimension i
// pairs with i + head_dim/2, rotated by angle pos · theta^(-2i/head_dim).
#pragma once

#include <cstdint>
#include <vector>

namespace grpo::model {

struct RopeTable {
  int64_t half = 0;
  std::vector<float> inv_freq;  // [head_dim / 2]
};

RopeTable make_rope(int64_t head_dim, float theta);

// x [T, heads, head_dim] rotated in place by positions [T]; inverse = the backward (rotation by −angle).
void rope_apply(const RopeTable& rope, float* x, const int64_t* positions, int64_t T, int64_t heads, bool inverse);

}  // namespace grpo::model
