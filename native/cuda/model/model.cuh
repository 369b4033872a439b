// The built-in decoder on the GPU: parameters, gradients, AdamW moments, activations and the KV cache are
// device arrays under the CPU model's layout (native/model/params.h: the same names, offsets and bind()),
// so the C ABI (model_api.cu) copies to or from the host only for tensors, optimizer state, tokens in and
// log-probs / tokens out. The math is native/model/*.cc's; the kernels live beside this file.
#pragma once

#include <cstdint>
#include <vector>

#include "attention.cuh"
#include "config.h"
#include "device_array.cuh"
#include "grpo/model.h"
#include "layer.h"
#include "params.h"
#include "rope.h"

namespace grpo::cuda::model {

using grpo::model::Config;
using grpo::model::Layout;
using grpo::model::LayerTensors;
using grpo::model::ModelTensors;
using grpo::model::TokenLayout;

// Activations of one layer [T, ·] (as native/model/layer.h).
struct LayerActs {
  DeviceArray<float> x_in, rms1, xn1, q, k, v, attn, lse, x_mid, rms2, xn2, gate, up, act;
  DeviceArray<float> q_raw, k_raw, q_rms, k_rms;  // qk_norm only
  void resize(const Config& c, int64_t T);
};

// Scratch of the backward pass, reused from layer to layer.
struct LayerGrads {
  DeviceArray<float> d_norm, d_gate, d_up, d_attn, dq, dk, dv, d_raw, delta, sums;
};

// Per-token geometry of one forward call on the device: tokens, positions, where each query's keys start,
// the end of its sequence (training) and its KV-cache slot (generation).
struct TokenMap {
  int64_t T = 0;
  DeviceArray<int32_t> tokens;
  DeviceArray<int64_t> positions, key_begin, query_end, kv_slot;
  QueryMap queries() const { return {positions.get(), key_begin.get(), query_end.get()}; }
};

// Keys and values of every generated sequence: [layers][rows · max_len, kv_dim].
struct KvCache {
  int64_t rows = 0, max_len = 0;
  std::vector<DeviceArray<float>> k, v;
};

struct TrainState {
  bool ready = false;
  TokenMap map;
  std::vector<int32_t> tokens;  // host copy (embedding-gradient groups)
  DeviceArray<int32_t> targets;
  std::vector<LayerActs> layers;
  DeviceArray<float> final_x, final_rms, final_hidden;  // [T, H], [T], [T, H]
  grpo_score_options options{};
};

struct Workspace {
  LayerActs layer;
  DeviceArray<float> x, y;  // [T, H]
};

struct Model {
  Config config;
  Layout layout;
  grpo::model::RopeTable rope;  // inv_freq [head_dim / 2] and attention factor, native/model/rope.cc's
  int64_t rope_positions = 0;   // rows of the tables below
  DeviceArray<float> rope_cos, rope_sin;  // [rope_positions, head_dim / 2], computed on the host as rope.cc does
  DeviceArray<float> params, grads, adam_m, adam_v;  // [layout.total] (grads, moments allocated on first use)
  int64_t step = 0;
  ModelTensors p, g;
  TrainState train;
  Workspace work;

  explicit Model(const Config& c);  // parameters zero
  void ensure_grads();
  void ensure_rope(int64_t positions);
  void release_work() { work = Workspace{}; }
};

// Uploads the tokens and the geometry of `tl`; with cache_len > 0 keys come from cache row span.cache_row.
void upload_map(const int32_t* tokens, const TokenLayout& tl, int64_t cache_len, TokenMap& map);

// Hidden states after the final norm [T, H] (device). `keep` stores activations for backward; `cache` is for generation.
void forward_hidden(Model& m, const TokenMap& map, TrainState* keep, KvCache* cache, DeviceArray<float>& hidden);

void score(Model& m, const int32_t* tokens, const TokenLayout& tl, const int32_t* targets, const grpo_score_options& o,
           bool train, float* logp, float* entropy);
void backward(Model& m, const float* grad_logp, const float* grad_entropy);

// One decoder layer (layer.cu): x [T, H] → x_out [T, H].
void layer_forward(Model& m, int64_t l, const TokenMap& map, const float* x, LayerActs& a, KvCache* cache, float* x_out);
// dx [T, H]: in, the gradient at the layer output; out, at its input. Weight gradients add into m.g.
void layer_backward(Model& m, int64_t l, const TokenMap& map, LayerActs& a, LayerGrads& s, float* dx);

float adamw_step(Model& m, const grpo_adamw_options& o);

void generate(Model& m, const int32_t* prompts, const int64_t* offsets, int64_t nseq, const grpo_generate_options& o,
              int32_t* out_tokens, float* out_logp, int64_t* out_lengths, uint8_t* truncated);

}  // namespace grpo::cuda::model
