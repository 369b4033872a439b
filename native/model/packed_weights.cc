#include "packed_weights.h"

#include "linear.h"

namespace grpo::model {

namespace {

// W [out, in] as the B operand of x · Wᵀ (a 16-bit W widened first)
PackedB pack(const Weight& W, int64_t out, int64_t in) {
  std::vector<float> scratch;
  return pack_b(true, out, in, widened(W, out * in, scratch), in);
}

}  // namespace

ModelPacks pack_weights(const Config& c, const ModelTensors& p) {
  ModelPacks packs;
  if (c.bf16_matmuls) return packs;
  const int64_t H = c.hidden, I = c.intermediate, q = c.q_dim(), kv = c.kv_dim();
  for (const LayerTensors& w : p.layers) {
    const auto d = [&](LoraModule m) { return dense_weight(w, m); };
    packs.layers.push_back({pack(d(kLoraQ), q, H), pack(d(kLoraK), kv, H), pack(d(kLoraV), kv, H), pack(d(kLoraO), H, q),
                            pack(d(kLoraGate), I, H), pack(d(kLoraUp), I, H), pack(d(kLoraDown), H, I)});
  }
  packs.lm_head = pack(p.lm_head, c.vocab, H);
  return packs;
}

}  // namespace grpo::model
