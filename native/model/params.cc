#include "params.h"

#include <cmath>

#include "counter_rng.h"
#include "runtime/thread_pool.h"

namespace grpo::model {

namespace {

void add(Layout& l, const std::string& name, int64_t rows, int64_t cols, bool matrix, bool norm) {
  l.slots.push_back({name, rows, cols, l.total, matrix, norm});
  l.total += rows * cols;
}

float* at(const Layout& l, float* base, const std::string& name) {
  const TensorSlot* s = l.find(name);
  return s && s->offset16 < 0 ? base + s->offset : nullptr;
}

// Standard normal number `index` of stream `stream` (Box–Muller on two hashed uniforms).
float normal_at(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t h = hash_at(seed, stream, index);
  const double u1 = (static_cast<double>(h >> 40) + 1.0) / 16777217.0, u2 = static_cast<double>(h & 0xFFFFFF) / 16777216.0;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

}  // namespace

const TensorSlot* Layout::find(const std::string& name) const {
  for (const auto& s : slots)
    if (s.name == name) return &s;
  return nullptr;
}

Layout make_layout(const Config& c) {
  Layout l;
  add(l, "model.embed_tokens.weight", c.vocab, c.hidden, true, false);
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    add(l, p + "input_layernorm.weight", c.hidden, 1, false, true);
    for (const char* proj : {"q", "k", "v"}) {
      const int64_t out = proj[0] == 'q' ? c.q_dim() : c.kv_dim();
      add(l, p + "self_attn." + proj + "_proj.weight", out, c.hidden, true, false);
      if (c.qkv_bias) add(l, p + "self_attn." + proj + "_proj.bias", out, 1, false, false);
    }
    if (c.qk_norm) {
      add(l, p + "self_attn.q_norm.weight", c.head_dim, 1, false, true);
      add(l, p + "self_attn.k_norm.weight", c.head_dim, 1, false, true);
    }
    add(l, p + "self_attn.o_proj.weight", c.hidden, c.q_dim(), true, false);
    add(l, p + "post_attention_layernorm.weight", c.hidden, 1, false, true);
    add(l, p + "mlp.gate_proj.weight", c.intermediate, c.hidden, true, false);
    add(l, p + "mlp.up_proj.weight", c.intermediate, c.hidden, true, false);
    add(l, p + "mlp.down_proj.weight", c.hidden, c.intermediate, true, false);
  }
  add(l, "model.norm.weight", c.hidden, 1, false, true);
  if (!c.tie_embeddings) add(l, "lm_head.weight", c.vocab, c.hidden, true, false);
  return l;
}

ModelTensors bind(const Config& c, const Layout& l, float* base) {
  ModelTensors t;
  t.embed = at(l, base, "model.embed_tokens.weight");
  t.lm_head = c.tie_embeddings ? t.embed : at(l, base, "lm_head.weight");
  t.final_norm = at(l, base, "model.norm.weight");
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const std::string a = p + "self_attn.";
    t.layers.push_back({at(l, base, p + "input_layernorm.weight"), at(l, base, a + "q_proj.weight"), at(l, base, a + "q_proj.bias"),
                        at(l, base, a + "k_proj.weight"), at(l, base, a + "k_proj.bias"), at(l, base, a + "v_proj.weight"),
                        at(l, base, a + "v_proj.bias"), at(l, base, a + "o_proj.weight"),
                        at(l, base, p + "post_attention_layernorm.weight"), at(l, base, p + "mlp.gate_proj.weight"),
                        at(l, base, p + "mlp.up_proj.weight"), at(l, base, p + "mlp.down_proj.weight"),
                        at(l, base, a + "q_norm.weight"), at(l, base, a + "k_norm.weight")});
  }
  return t;
}

void init_parameters(const Layout& layout, uint64_t seed, float* base) {
  for (size_t s = 0; s < layout.slots.size(); ++s) {
    const TensorSlot& slot = layout.slots[s];
    float* data = base + slot.offset;
    parallel_for(slot.size(), 65536, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        data[i] = slot.matrix ? 0.02f * normal_at(seed, s, static_cast<uint64_t>(i)) : (slot.norm ? 1.0f : 0.0f);
    });
  }
}

}  // namespace grpo::model
