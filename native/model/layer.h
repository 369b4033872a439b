// One decoder layer: x + attn(norm(x)), then + mlp(norm(·)); forward keeps what backward needs.
#pragma once

#include <cstdint>
#include <vector>

#include "attention.h"
#include "config.h"
#include "lora.h"
#include "params.h"
#include "rope.h"

namespace grpo::model {

// Where a run of tokens sits: tokens t0 .. t0+len-1 at positions p0 .. of sequence `cache_row`.
struct Span {
  int64_t t0, len, p0, cache_row;
};

// How the tokens of one forward call are laid out.
struct TokenLayout {
  int64_t T = 0;
  std::vector<int64_t> positions;  // [T]
  std::vector<Span> spans;
};

// Keys and values of every sequence being generated: [layers][rows, max_len, kv_dim].
struct KvCache {
  int64_t rows = 0, max_len = 0, kv_dim = 0;
  std::vector<std::vector<float>> k, v;
  float* k_row(int64_t layer, int64_t row) { return k[layer].data() + row * max_len * kv_dim; }
  float* v_row(int64_t layer, int64_t row) { return v[layer].data() + row * max_len * kv_dim; }
};

// Activations of one layer [T, ·] (the input x_in is stored so that backward can run layer by layer).
struct LayerActs {
  std::vector<float> x_in, rms1, xn1, q, k, v, attn, lse, x_mid, rms2, xn2, gate, up, act;
  std::vector<float> q_raw, k_raw, q_rms, k_rms;  // qk_norm only: projections before the head norms, their 1/rms
  std::array<std::vector<float>, kLoraModules> lora_u;  // [T, r] of each adapted module (lora.h)
  void resize(const Config& c, int64_t T);
};

struct LayerPacks;  // packed_weights.h

// x [T, H] → x_out [T, H] (x_out may alias nothing in acts). With a cache, k/v go into it; with packs, the
// weights are multiplied from their packed panels; with adapters, each adapted module adds its LoRA term.
void layer_forward(const Config& c, const RopeTable& rope, const LayerTensors& w, const TokenLayout& tl, const float* x,
                   LayerActs& a, KvCache* cache, int64_t layer, float* x_out, const LayerPacks* packs = nullptr,
                   const LayerAdapters* lora = nullptr);

// Scratch of layer_backward, reused from layer to layer.
struct LayerGrads {
  std::vector<float> d_norm, d_gate, d_up, d_attn, dq, dk, dv;
};

// dx [T, H] in: gradient at the layer output; out: gradient at its input. Weight gradients add into g (a null
// pointer there: that tensor is frozen), the adapters' into their own gradients (`lora`: the forward's adapters).
void layer_backward(const Config& c, const RopeTable& rope, const LayerTensors& w, const LayerTensors& g,
                    const TokenLayout& tl, LayerActs& a, LayerGrads& s, std::vector<float>& dx,
                    const LayerAdapters* lora = nullptr);

}  // namespace grpo::model
