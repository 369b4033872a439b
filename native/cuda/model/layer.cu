// One decoder layer on the GPU: native/model/layer.cc step for step.
#include "model.cuh"

#include "kernels.cuh"
#include "linear.cuh"

namespace grpo::cuda::model {

namespace {

AttnShape attn_shape(const Config& c) { return {c.heads, c.kv_heads, c.head_dim}; }

// The dense layers' GEMM: bf16-rounded inputs with setBf16Matmuls, as the CPU's gemm_bf16 (attention and the
// LM head stay float32).
GemmPrecision dense(const Config& c) { return c.bf16_matmuls ? GemmPrecision::kBf16 : GemmPrecision::kFloat32; }

void copy_device(float* dst, const float* src, int64_t n) {
  if (n > 0) check(cudaMemcpy(dst, src, sizeof(float) * n, cudaMemcpyDeviceToDevice), "cudaMemcpy on device");
}

void rope(Model& m, float* x, const TokenMap& map, int64_t heads, bool inverse) {
  rope_apply(x, map.positions.get(), m.rope_cos.get(), m.rope_sin.get(), map.T, heads, m.config.head_dim / 2, inverse);
}

// d (the gradient after a per-head norm [T·heads, head_dim]) becomes the gradient before it.
void head_norm_backward(const Config& c, const DeviceArray<float>& raw, const float* w, const DeviceArray<float>& rms,
                        float* dw, DeviceArray<float>& d, LayerGrads& s) {
  s.d_raw.assign_zero(d.size());
  rmsnorm_backward(raw.get(), w, rms.get(), d.get(), rms.size(), c.head_dim, s.d_raw.get(), dw, s.sums);
  d.swap(s.d_raw);
}

}  // namespace

void LayerActs::resize(const Config& c, int64_t T) {
  for (auto* buf : {&x_in, &xn1, &x_mid, &xn2}) buf->resize(T * c.hidden);
  for (auto* buf : {&rms1, &rms2}) buf->resize(T);
  for (auto* buf : {&q, &attn}) buf->resize(T * c.q_dim());
  for (auto* buf : {&k, &v}) buf->resize(T * c.kv_dim());
  lse.resize(T * c.heads);
  for (auto* buf : {&gate, &up, &act}) buf->resize(T * c.intermediate);
  if (!c.qk_norm) return;
  q_raw.resize(q.size());
  k_raw.resize(k.size());
  q_rms.resize(T * c.heads);
  k_rms.resize(T * c.kv_heads);
}

void layer_forward(Model& m, int64_t l, const TokenMap& map, const float* x, LayerActs& a, KvCache* cache, float* x_out) {
  const Config& c = m.config;
  const LayerTensors& w = m.p.layers[l];
  const int64_t T = map.T, H = c.hidden, kv = c.kv_dim();
  copy_device(a.x_in.get(), x, T * H);
  rmsnorm_forward(x, w.attn_norm, T, H, c.eps, a.xn1.get(), a.rms1.get());
  linear_forward(a.xn1.get(), w.wq, w.bq, T, H, c.q_dim(), a.q.get(), dense(c));
  linear_forward(a.xn1.get(), w.wk, w.bk, T, H, kv, a.k.get(), dense(c));
  linear_forward(a.xn1.get(), w.wv, w.bv, T, H, kv, a.v.get(), dense(c));
  if (c.qk_norm) {  // RMSNorm of each head's vector (rows [T·heads, head_dim])
    a.q.swap(a.q_raw);
    a.k.swap(a.k_raw);
    rmsnorm_forward(a.q_raw.get(), w.q_norm, T * c.heads, c.head_dim, c.eps, a.q.get(), a.q_rms.get());
    rmsnorm_forward(a.k_raw.get(), w.k_norm, T * c.kv_heads, c.head_dim, c.eps, a.k.get(), a.k_rms.get());
  }
  rope(m, a.q.get(), map, c.heads, false);
  rope(m, a.k.get(), map, c.kv_heads, false);
  const float *keys = a.k.get(), *values = a.v.get();
  if (cache) {
    copy_rows(a.k.get(), nullptr, cache->k[l].get(), map.kv_slot.get(), T, kv);
    copy_rows(a.v.get(), nullptr, cache->v[l].get(), map.kv_slot.get(), T, kv);
    keys = cache->k[l].get();
    values = cache->v[l].get();
  }
  attention_forward(attn_shape(c), a.q.get(), keys, values, map.queries(), T, a.attn.get(), a.lse.get());
  linear_forward(a.attn.get(), w.wo, nullptr, T, c.q_dim(), H, a.x_mid.get(), dense(c));
  add_into(a.x_mid.get(), x, T * H);
  rmsnorm_forward(a.x_mid.get(), w.mlp_norm, T, H, c.eps, a.xn2.get(), a.rms2.get());
  linear_forward(a.xn2.get(), w.w_gate, nullptr, T, H, c.intermediate, a.gate.get(), dense(c));
  linear_forward(a.xn2.get(), w.w_up, nullptr, T, H, c.intermediate, a.up.get(), dense(c));
  swiglu_forward(a.gate.get(), a.up.get(), a.act.get(), T * c.intermediate);
  linear_forward(a.act.get(), w.w_down, nullptr, T, c.intermediate, H, x_out, dense(c));
  add_into(x_out, a.x_mid.get(), T * H);
}

void layer_backward(Model& m, int64_t l, const TokenMap& map, LayerActs& a, LayerGrads& s, float* dx) {
  const Config& c = m.config;
  const LayerTensors &w = m.p.layers[l], &g = m.g.layers[l];
  const int64_t T = map.T, H = c.hidden, I = c.intermediate, kv = c.kv_dim();
  // MLP branch: d_mid = dx + norm-backward(mlp-backward(dx)); d_gate first holds d(act) = dx · W_down
  s.d_norm.assign_zero(T * H);
  s.d_gate.assign_zero(T * I);
  s.d_up.resize(T * I);
  linear_backward(a.act.get(), w.w_down, dx, T, I, H, s.d_gate.get(), g.w_down, nullptr, s.sums, dense(c));
  swiglu_backward(a.gate.get(), a.up.get(), s.d_gate.get(), s.d_up.get(), T * I);
  linear_backward(a.xn2.get(), w.w_gate, s.d_gate.get(), T, H, I, s.d_norm.get(), g.w_gate, nullptr, s.sums, dense(c));
  linear_backward(a.xn2.get(), w.w_up, s.d_up.get(), T, H, I, s.d_norm.get(), g.w_up, nullptr, s.sums, dense(c));
  rmsnorm_backward(a.x_mid.get(), w.mlp_norm, a.rms2.get(), s.d_norm.get(), T, H, dx, g.mlp_norm, s.sums);
  // Attention branch
  s.d_attn.assign_zero(T * c.q_dim());
  s.dq.resize(T * c.q_dim());
  s.dk.resize(T * kv);
  s.dv.resize(T * kv);
  s.delta.resize(T * c.heads);
  linear_backward(a.attn.get(), w.wo, dx, T, c.q_dim(), H, s.d_attn.get(), g.wo, nullptr, s.sums, dense(c));
  attention_backward(attn_shape(c), a.q.get(), a.k.get(), a.v.get(), map.queries(), T, a.attn.get(), a.lse.get(),
                     s.d_attn.get(), s.dq.get(), s.dk.get(), s.dv.get(), s.delta.get());
  rope(m, s.dq.get(), map, c.heads, true);
  rope(m, s.dk.get(), map, c.kv_heads, true);
  if (c.qk_norm) {
    head_norm_backward(c, a.q_raw, w.q_norm, a.q_rms, g.q_norm, s.dq, s);
    head_norm_backward(c, a.k_raw, w.k_norm, a.k_rms, g.k_norm, s.dk, s);
  }
  s.d_norm.assign_zero(T * H);
  linear_backward(a.xn1.get(), w.wq, s.dq.get(), T, H, c.q_dim(), s.d_norm.get(), g.wq, g.bq, s.sums, dense(c));
  linear_backward(a.xn1.get(), w.wk, s.dk.get(), T, H, kv, s.d_norm.get(), g.wk, g.bk, s.sums, dense(c));
  linear_backward(a.xn1.get(), w.wv, s.dv.get(), T, H, kv, s.d_norm.get(), g.wv, g.bv, s.sums, dense(c));
  rmsnorm_backward(a.x_in.get(), w.attn_norm, a.rms1.get(), s.d_norm.get(), T, H, dx, g.attn_norm, s.sums);
}

}  // namespace grpo::cuda::model
