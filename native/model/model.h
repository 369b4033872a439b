// The whole decoder: parameters, gradients, optimizer state and the activations of the last
// training forward. The C ABI in model_api.cc wraps it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "config.h"
#include "grpo/model.h"
#include "layer.h"
#include "lora.h"
#include "pack.h"
#include "packed_weights.h"
#include "params.h"
#include "rope.h"

namespace grpo::model {

// The LM head runs only on rows whose target is not ignore_index (prompt positions carry none).
struct HeadRows {
  std::vector<int64_t> rows;     // [n] positions in the layout, ascending
  std::vector<int32_t> targets;  // [n]
  std::vector<float> hidden;     // [n, H] final hidden states of those rows
  std::vector<float> lse;        // [n] the training forward's log-sum-exp, reused by the backward
  std::vector<float> entropy;    // [n] the training forward's entropies when it computed them, else empty
  std::vector<float> logits;     // [n, vocab] the training forward's logits when kept (model.cc), else empty
};

struct TrainState {
  bool ready = false;
  bool recompute = false;  // keep each layer's input only; backward recomputes the layer's activations from it
  TokenLayout layout;
  std::vector<int32_t> tokens;
  std::vector<LayerActs> layers;                  // [layers] without recomputation
  std::vector<std::vector<float>> layer_inputs;  // [layers][T, H] with recomputation
  LayerActs recomputed;                          // with recomputation: one layer's activations, reused layer by layer
  std::vector<float> recomputed_out;             // [T, H] the recomputed layer's output (not read)
  std::vector<float> final_x, final_rms;  // [T, H], [T]
  HeadRows head;                          // the rows that carry a target, for the LM head's backward
  LayerGrads scratch;                     // backward's buffers, kept from step to step (no page faults)
  std::vector<float> d_hidden, dx;        // [T, H] each
  grpo_score_options options{};
  uint64_t lora_key = 0;                  // the dropout masks of the forward's adapters
};

// Buffers of inference forwards, kept between the steps of one generation (no re-allocation, no page faults).
struct Workspace {
  LayerActs layer;
  std::vector<float> x, y;  // [T, H]
};

struct Model {
  Config config;
  Layout layout;
  RopeTable rope;
  std::vector<float> params, grads, adam_m, adam_v;  // each [layout.total] (grads, moments allocated on first use)
  int64_t step = 0;
  std::vector<uint16_t> base16;  // the slots with offset16 >= 0: a frozen LoRA base's dense matrices in 16 bits
  Dtype16 base16_dtype = Dtype16::bf16;  // what base16 holds (when not empty)
  ModelTensors p{}, g{};  // g: null pointers (frozen) under LoRA
  std::unique_ptr<Lora> lora;  // adapters (then they alone train), or null
  TrainState train;
  Workspace work;

  explicit Model(const Config& c);  // parameters zero
  Model(const Model& other);  // parameters (and adapters) only
  void ensure_grads();  // the base's gradient buffers, or under LoRA null pointers for every base tensor
  void bind_params();   // p from layout, params and base16
  // Moves the dense matrices (q/k/v/o/gate/up/down of every layer) out of params into base16, rounded to `dtype`
  // (lossless for a checkpoint stored in that dtype): a frozen LoRA base in half the memory.
  void keep_dense_in_16_bits(Dtype16 dtype);
  // The slots keep_dense_in_16_bits moves: the layers' matrices, not the embeddings or the LM head.
  static bool dense_layer_matrix(const TensorSlot& s) { return s.matrix && s.name.rfind("model.layers.", 0) == 0; }
  void release_work() { work = Workspace{}; }
};

// Hidden states after the final norm [T, H]. `keep` stores activations for backward (with keep->recompute, only
// each layer's input); `cache` is for generation.
// `packs` (generation): the weights packed once for the whole call.
void forward_hidden(Model& m, const int32_t* tokens, const TokenLayout& tl, TrainState* keep, KvCache* cache,
                    std::vector<float>& hidden, const ModelPacks* packs = nullptr);

void score(Model& m, const int32_t* tokens, const TokenLayout& tl, const int32_t* targets, const grpo_score_options& o,
           bool train, float* logp, float* entropy);
void backward(Model& m, const float* grad_logp, const float* grad_entropy);

}  // namespace grpo::model
