#include "packed_weights.h"

namespace grpo::model {

namespace {

// W [out, in] as the B operand of x · Wᵀ
PackedB pack(const float* W, int64_t out, int64_t in) { return pack_b(true, out, in, W, in); }

}  // namespace

ModelPacks pack_weights(const Config& c, const ModelTensors& p) {
  ModelPacks packs;
  if (c.bf16_matmuls) return packs;
  const int64_t H = c.hidden, I = c.intermediate, q = c.q_dim(), kv = c.kv_dim();
  for (const LayerTensors& w : p.layers)
    packs.layers.push_back({pack(w.wq, q, H), pack(w.wk, kv, H), pack(w.wv, kv, H), pack(w.wo, H, q), pack(w.w_gate, I, H),
                            pack(w.w_up, I, H), pack(w.w_down, H, I)});
  packs.lm_head = pack(p.lm_head, c.vocab, H);
  return packs;
}

}  // namespace grpo::model
