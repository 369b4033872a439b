#include "layer.h"

#include <algorithm>
#include <cstring>

#include "linear.h"
#include "mlp.h"
#include "packed_weights.h"
#include "rmsnorm.h"
#include "runtime/thread_pool.h"

namespace grpo::model {

namespace {

AttnShape attn_shape(const Config& c) { return {c.heads, c.kv_heads, c.head_dim}; }

void add_into(float* y, const float* x, int64_t n) {
  parallel_for(n, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] += x[i];
  });
}

// Segments over the layer's own k/v (training, scoring) or over the cache rows after copying k/v in.
std::vector<Segment> segments(const Config& c, const TokenLayout& tl, LayerActs& a, KvCache* cache, int64_t layer) {
  const int64_t kv = c.kv_dim();
  std::vector<Segment> segs;
  for (const Span& s : tl.spans) {
    if (!cache) {
      segs.push_back({s.t0, s.len, s.p0, a.k.data() + s.t0 * kv, a.v.data() + s.t0 * kv, nullptr, nullptr});
      continue;
    }
    float *k = cache->k_row(layer, s.cache_row), *v = cache->v_row(layer, s.cache_row);
    std::memcpy(k + s.p0 * kv, a.k.data() + s.t0 * kv, sizeof(float) * s.len * kv);
    std::memcpy(v + s.p0 * kv, a.v.data() + s.t0 * kv, sizeof(float) * s.len * kv);
    segs.push_back({s.t0, s.len, s.p0, k, v, nullptr, nullptr});
  }
  return segs;
}

// d (gradient after the per-head norm) becomes the gradient before it.
void head_norm_backward(const Config& c, const std::vector<float>& raw, const float* w, const std::vector<float>& rms,
                        float* dw, std::vector<float>& d) {
  std::vector<float> d_raw(d.size(), 0.0f);
  rmsnorm_backward(raw.data(), w, rms.data(), d.data(), static_cast<int64_t>(rms.size()), c.head_dim, d_raw.data(), dw);
  d.swap(d_raw);
}

// The LoRA site of module m: its adapter when the layer has one in this call, and u's buffer [T, r] in the acts.
LoraSite site(const LayerAdapters* lora, LoraModule m, LayerActs& a, int64_t T) {
  if (!lora || !(*lora)[m].A) return {};
  std::vector<float>& u = a.lora_u[m];
  u.resize(static_cast<size_t>(T * (*lora)[m].rank));
  return {&(*lora)[m], u.data()};
}

MlpWeights mlp_weights(const Config& c, const LayerTensors& w, const LayerAdapters* lora, LayerActs& a, int64_t T) {
  MlpWeights mlp{dense_weight(w, kLoraGate), dense_weight(w, kLoraUp), dense_weight(w, kLoraDown), c.bf16_matmuls};
  mlp.gate_lora = site(lora, kLoraGate, a, T);
  mlp.up_lora = site(lora, kLoraUp, a, T);
  mlp.down_lora = site(lora, kLoraDown, a, T);
  return mlp;
}

}  // namespace

void LayerActs::resize(const Config& c, int64_t T) {
  for (auto* buf : {&x_in, &xn1, &x_mid, &xn2}) buf->resize(static_cast<size_t>(T * c.hidden));
  for (auto* buf : {&rms1, &rms2}) buf->resize(static_cast<size_t>(T));
  for (auto* buf : {&q, &attn}) buf->resize(static_cast<size_t>(T * c.q_dim()));
  for (auto* buf : {&k, &v}) buf->resize(static_cast<size_t>(T * c.kv_dim()));
  lse.resize(static_cast<size_t>(T * c.heads));
  for (auto* buf : {&gate, &up, &act}) buf->resize(static_cast<size_t>(T * c.intermediate));
  if (!c.qk_norm) return;
  q_raw.resize(q.size());
  k_raw.resize(k.size());
  q_rms.resize(static_cast<size_t>(T * c.heads));
  k_rms.resize(static_cast<size_t>(T * c.kv_heads));
}

void layer_forward(const Config& c, const RopeTable& rope, const LayerTensors& w, const TokenLayout& tl, const float* x,
                   LayerActs& a, KvCache* cache, int64_t layer, float* x_out, const LayerPacks* packs,
                   const LayerAdapters* lora) {
  const int64_t T = tl.T, H = c.hidden;
  const bool bf16 = c.bf16_matmuls;
  std::copy(x, x + T * H, a.x_in.begin());
  rmsnorm_forward(x, w.attn_norm, T, H, c.eps, a.xn1.data(), a.rms1.data());
  linear_forward(a.xn1.data(), dense_weight(w, kLoraQ), w.bq, T, H, c.q_dim(), a.q.data(), bf16, packs ? &packs->wq : nullptr, site(lora, kLoraQ, a, T));
  linear_forward(a.xn1.data(), dense_weight(w, kLoraK), w.bk, T, H, c.kv_dim(), a.k.data(), bf16, packs ? &packs->wk : nullptr, site(lora, kLoraK, a, T));
  linear_forward(a.xn1.data(), dense_weight(w, kLoraV), w.bv, T, H, c.kv_dim(), a.v.data(), bf16, packs ? &packs->wv : nullptr, site(lora, kLoraV, a, T));
  if (c.qk_norm) {  // RMSNorm of each head's vector (rows [T·heads, head_dim])
    std::swap(a.q, a.q_raw);
    std::swap(a.k, a.k_raw);
    rmsnorm_forward(a.q_raw.data(), w.q_norm, T * c.heads, c.head_dim, c.eps, a.q.data(), a.q_rms.data());
    rmsnorm_forward(a.k_raw.data(), w.k_norm, T * c.kv_heads, c.head_dim, c.eps, a.k.data(), a.k_rms.data());
  }
  rope_apply(rope, a.q.data(), tl.positions.data(), T, c.heads, false);
  rope_apply(rope, a.k.data(), tl.positions.data(), T, c.kv_heads, false);
  attention_forward(attn_shape(c), a.q.data(), segments(c, tl, a, cache, layer), a.attn.data(), a.lse.data());
  linear_forward(a.attn.data(), dense_weight(w, kLoraO), nullptr, T, c.q_dim(), H, a.x_mid.data(), bf16, packs ? &packs->wo : nullptr,
                 site(lora, kLoraO, a, T));
  add_into(a.x_mid.data(), x, T * H);
  rmsnorm_forward(a.x_mid.data(), w.mlp_norm, T, H, c.eps, a.xn2.data(), a.rms2.data());
  MlpWeights mlp = mlp_weights(c, w, lora, a, T);
  if (packs) mlp.gate_packed = &packs->gate, mlp.up_packed = &packs->up, mlp.down_packed = &packs->down;
  mlp_forward(mlp, a.xn2.data(), T, H, c.intermediate, a.gate.data(), a.up.data(), a.act.data(), x_out);
  add_into(x_out, a.x_mid.data(), T * H);
}

void layer_backward(const Config& c, const RopeTable& rope, const LayerTensors& w, const LayerTensors& g,
                    const TokenLayout& tl, LayerActs& a, LayerGrads& s, std::vector<float>& dx, const LayerAdapters* lora) {
  const int64_t T = tl.T, H = c.hidden, I = c.intermediate, kv = c.kv_dim();
  std::vector<float>&d_norm = s.d_norm, &d_gate = s.d_gate, &d_up = s.d_up, &d_attn = s.d_attn, &dq = s.dq, &dk = s.dk, &dv = s.dv;
  d_norm.assign(static_cast<size_t>(T * H), 0.0f);
  d_gate.resize(static_cast<size_t>(T * I));
  d_up.resize(d_gate.size());
  // MLP branch: d_mid = dx + norm-backward(mlp-backward(dx))
  mlp_backward(mlp_weights(c, w, lora, a, T), a.xn2.data(), a.gate.data(), a.up.data(), a.act.data(), dx.data(), T, H, I,
               d_norm.data(), {g.w_gate, g.w_up, g.w_down}, d_gate.data(), d_up.data());
  rmsnorm_backward(a.x_mid.data(), w.mlp_norm, a.rms2.data(), d_norm.data(), T, H, dx.data(), g.mlp_norm);
  // Attention branch
  d_attn.assign(static_cast<size_t>(T * c.q_dim()), 0.0f);
  dq.resize(d_attn.size());
  dk.assign(static_cast<size_t>(T * kv), 0.0f);
  dv.assign(dk.size(), 0.0f);
  linear_backward(a.attn.data(), dense_weight(w, kLoraO), dx.data(), T, c.q_dim(), H, d_attn.data(), g.wo, nullptr, c.bf16_matmuls, site(lora, kLoraO, a, T));
  std::vector<Segment> segs = segments(c, tl, a, nullptr, 0);
  for (Segment& s : segs) {
    s.dk = dk.data() + s.t0 * kv;
    s.dv = dv.data() + s.t0 * kv;
  }
  attention_backward(attn_shape(c), a.q.data(), segs, a.attn.data(), a.lse.data(), d_attn.data(), dq.data());
  rope_apply(rope, dq.data(), tl.positions.data(), T, c.heads, true);
  rope_apply(rope, dk.data(), tl.positions.data(), T, c.kv_heads, true);
  if (c.qk_norm) {
    head_norm_backward(c, a.q_raw, w.q_norm, a.q_rms, g.q_norm, dq);
    head_norm_backward(c, a.k_raw, w.k_norm, a.k_rms, g.k_norm, dk);
  }
  std::fill(d_norm.begin(), d_norm.end(), 0.0f);
  linear_backward(a.xn1.data(), dense_weight(w, kLoraQ), dq.data(), T, H, c.q_dim(), d_norm.data(), g.wq, g.bq, c.bf16_matmuls, site(lora, kLoraQ, a, T));
  linear_backward(a.xn1.data(), dense_weight(w, kLoraK), dk.data(), T, H, kv, d_norm.data(), g.wk, g.bk, c.bf16_matmuls, site(lora, kLoraK, a, T));
  linear_backward(a.xn1.data(), dense_weight(w, kLoraV), dv.data(), T, H, kv, d_norm.data(), g.wv, g.bv, c.bf16_matmuls, site(lora, kLoraV, a, T));
  rmsnorm_backward(a.x_in.data(), w.attn_norm, a.rms1.data(), d_norm.data(), T, H, dx.data(), g.attn_norm);
}

}  // namespace grpo::model
