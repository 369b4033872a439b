#include "model.h"

#include <algorithm>
#include <string>

#include "grpo/logprob.h"
#include "logprob/linear_logprob.h"
#include "rmsnorm.h"
#include "runtime/dtype16.h"
#include "runtime/error.h"
#include "runtime/thread_pool.h"

namespace grpo::model {

namespace {

void embed(const Model& m, const int32_t* tokens, int64_t T, float* x) {
  const int64_t H = m.config.hidden;
  parallel_for(T, 64, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) std::copy(m.p.embed + tokens[t] * H, m.p.embed + (tokens[t] + 1) * H, x + t * H);
  });
}

// g_embed[tokens[t]] += dx[t], threaded over hidden columns so each row's sum keeps token order.
void embed_backward(Model& m, const int32_t* tokens, int64_t T, const float* dx) {
  const int64_t H = m.config.hidden;
  parallel_for(H, 64, [&](int64_t begin, int64_t end) {
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = begin; h < end; ++h) m.g.embed[tokens[t] * H + h] += dx[t * H + h];
  });
}

void check(grpo_status status) {
  if (status != GRPO_OK) fail(status, "%s", grpo_last_error());
}

// The adapters of layer l in this call: null without adapters or while they are off; in training with the forward's
// dropout and the adapters' gradients.
const LayerAdapters* adapters_of(Model& m, int64_t l, bool train, LayerAdapters& out) {
  if (!m.lora || !m.lora->enabled) return nullptr;
  out = layer_adapters(*m.lora, l, train, m.train.lora_key, train ? m.lora->grads.data() : nullptr);
  return &out;
}

// The training state's activation buffers for `layers` layers: every layer's, or with recomputation each layer's
// input and one reused set (the other kind freed, so switching gives the memory back).
void size_kept_layers(TrainState& ts, int64_t layers) {
  if (ts.recompute) {
    std::vector<LayerActs>().swap(ts.layers);
    ts.layer_inputs.resize(static_cast<size_t>(layers));
    return;
  }
  std::vector<std::vector<float>>().swap(ts.layer_inputs);
  ts.recomputed = LayerActs{};
  std::vector<float>().swap(ts.recomputed_out);
  ts.layers.resize(static_cast<size_t>(layers));
}

// Where layer l's forward writes its activations: the workspace (inference), the layer's own set (training), or
// with recomputation the reused set, after keeping the layer's input x.
LayerActs& forward_acts(Model& m, TrainState* keep, int64_t l, const std::vector<float>& x) {
  if (!keep) return m.work.layer;
  if (!keep->recompute) return keep->layers[l];
  keep->layer_inputs[l].assign(x.begin(), x.end());
  return keep->recomputed;
}

// Layer l's activations for its backward. With recomputation they are computed again from the kept input by the
// forward's code on the forward's inputs (the same adapters and dropout key), so they are the forward's bits; the
// reused set still holds the last layer's from the forward.
LayerActs& backward_acts(Model& m, int64_t l, const LayerAdapters* adapters) {
  TrainState& ts = m.train;
  if (!ts.recompute) return ts.layers[l];
  if (l == m.config.layers - 1) return ts.recomputed;
  ts.recomputed_out.resize(ts.layer_inputs[l].size());
  layer_forward(m.config, m.rope, m.p.layers[l], ts.layout, ts.layer_inputs[l].data(), ts.recomputed, nullptr, l,
                ts.recomputed_out.data(), nullptr, adapters);
  return ts.recomputed;
}

// The rows of hidden [T, H] whose target is not ignore_index.
void gather_head_rows(const std::vector<float>& hidden, const int32_t* targets, int64_t T, int64_t H, int32_t ignore,
                      HeadRows& out) {
  out.rows.clear();
  out.targets.clear();
  for (int64_t t = 0; t < T; ++t)
    if (targets[t] != ignore) {
      out.rows.push_back(t);
      out.targets.push_back(targets[t]);
    }
  out.hidden.resize(out.rows.size() * static_cast<size_t>(H));
  parallel_for(static_cast<int64_t>(out.rows.size()), 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) std::copy_n(hidden.data() + out.rows[i] * H, H, out.hidden.data() + i * H);
  });
}

// dst [T] = src [n] at rows, 0 elsewhere.
void scatter(const std::vector<int64_t>& rows, const float* src, int64_t T, float* dst) {
  std::fill(dst, dst + T, 0.0f);
  for (size_t i = 0; i < rows.size(); ++i) dst[rows[i]] = src[i];
}

// Inference scoring runs groups of whole sequences of about this many tokens: a group's activations stay in
// the caches between the passes of a layer, and the workspace stays small. A row's results do not depend on
// what it is packed with, so the bits are those of a single pass.
constexpr int64_t kScoreGroupTokens = 4096;

// Spans [first, last) of tl as a layout of their own (their first token becomes token 0).
TokenLayout sub_layout(const TokenLayout& tl, size_t first, size_t last) {
  TokenLayout sub;
  const int64_t t0 = tl.spans[first].t0;
  for (size_t i = first; i < last; ++i) {
    sub.spans.push_back(tl.spans[i]);
    sub.spans.back().t0 -= t0;
  }
  sub.T = tl.spans[last - 1].t0 + tl.spans[last - 1].len - t0;
  sub.positions.assign(tl.positions.begin() + t0, tl.positions.begin() + t0 + sub.T);
  return sub;
}

// The training forward keeps the LM head's logits for the backward (one matrix product per tile fewer, the same
// bits) when they take at most this much memory and the layers are not recomputed (recomputation asks for less).
constexpr int64_t kKeptHeadLogitsBytes = int64_t{256} << 20;

bool keeps_head_logits(const Model& m, size_t rows) {
  return !m.train.recompute && static_cast<int64_t>(rows) * m.config.vocab * static_cast<int64_t>(sizeof(float)) <= kKeptHeadLogitsBytes;
}

// The fused LM head forward over the head rows; a training forward also keeps lse and, within the budget, the logits.
void head_forward(Model& m, HeadRows& head, const grpo_score_options& o, bool train, bool entropy, float* logp) {
  const int64_t n = static_cast<int64_t>(head.rows.size());
  head.lse.resize(train ? n : 0);
  head.entropy.resize(entropy ? n : 0);
  const bool keep = train && keeps_head_logits(m, head.rows.size());
  if (keep) head.logits.resize(static_cast<size_t>(n * m.config.vocab));
  else if (train) std::vector<float>().swap(head.logits);
  if (n == 0) return;
  const grpo_linear_logprob_options lo{o.temperature, o.ignore_index, 0, 0};
  const Config& c = m.config;
  float* h = entropy ? head.entropy.data() : nullptr;
  float* lse = train ? head.lse.data() : nullptr;
  check(keep ? grpo_linear_logprob_forward_logits(head.hidden.data(), m.p.lm_head, nullptr, head.targets.data(), n, c.hidden,
                                                  c.vocab, &lo, logp, h, lse, head.logits.data())
             : grpo_linear_logprob_forward(head.hidden.data(), m.p.lm_head, nullptr, head.targets.data(), n, c.hidden, c.vocab,
                                           &lo, logp, h, lse));
}

// The forward and LM head of one layout; logp, entropy [tl.T].
void score_layout(Model& m, const int32_t* tokens, const TokenLayout& tl, const int32_t* targets, const grpo_score_options& o,
                  bool train, std::vector<float>& hidden, float* logp, float* entropy) {
  forward_hidden(m, tokens, tl, train ? &m.train : nullptr, nullptr, hidden);
  HeadRows& head = m.train.head;
  gather_head_rows(hidden, targets, tl.T, m.config.hidden, o.ignore_index, head);
  std::vector<float> head_logp(head.rows.size());
  head_forward(m, head, o, train, entropy != nullptr, head_logp.data());
  scatter(head.rows, head_logp.data(), tl.T, logp);
  if (entropy) scatter(head.rows, head.entropy.data(), tl.T, entropy);
}

}  // namespace

Model::Model(const Config& c) : config(c), layout(make_layout(c)), rope(make_rope(c)) {
  params.resize(static_cast<size_t>(layout.total));
  bind_params();
}

Model::Model(const Model& o)
    : config(o.config), layout(o.layout), rope(o.rope), params(o.params), base16(o.base16), base16_dtype(o.base16_dtype) {
  bind_params();
  if (!o.lora) return;
  lora = std::make_unique<Lora>(*o.lora);
  lora->adam_m.clear();
  lora->adam_v.clear();
  std::fill(lora->grads.begin(), lora->grads.end(), 0.0f);
  lora->forwards = 0;
}

void Model::bind_params() {
  p = bind(config, layout, params.data());
  for (int64_t l = 0; l < config.layers; ++l) {
    const std::string prefix = "model.layers." + std::to_string(l) + ".";
    const char* names[kLoraModules] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                                       "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"};
    for (int m = 0; m < kLoraModules; ++m) {
      const TensorSlot* s = layout.find(prefix + names[m] + ".weight");
      p.layers[l].dense16[m] = s->offset16 >= 0 ? base16.data() + s->offset16 : nullptr;
    }
    p.layers[l].dtype16 = base16_dtype;
  }
}

void Model::keep_dense_in_16_bits(Dtype16 dtype) {
  if (!base16.empty()) return;
  base16_dtype = dtype;
  int64_t total16 = 0;
  for (const TensorSlot& s : layout.slots) total16 += dense_layer_matrix(s) ? s.size() : 0;
  std::vector<float> kept(static_cast<size_t>(layout.total - total16));
  base16.resize(static_cast<size_t>(total16));
  int64_t at16 = 0, at32 = 0;
  for (TensorSlot& s : layout.slots) {
    const float* values = params.data() + s.offset;
    if (dense_layer_matrix(s)) {
      s.offset16 = at16;
      parallel_for(s.size(), 65536, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) base16[s.offset16 + i] = round16(dtype, values[i]);
      });
      at16 += s.size();
    } else {
      std::copy_n(values, s.size(), kept.data() + at32);
      s.offset = at32;
      at32 += s.size();
    }
  }
  layout.total = at32;
  params.swap(kept);  // the float32 copy of the matrices is freed with `kept`
  bind_params();
}

void Model::ensure_grads() {
  if (lora) {
    if (g.layers.empty()) g.layers.resize(static_cast<size_t>(config.layers));
    return;
  }
  if (!grads.empty()) return;
  grads.assign(static_cast<size_t>(layout.total), 0.0f);
  g = bind(config, layout, grads.data());
}

void forward_hidden(Model& m, const int32_t* tokens, const TokenLayout& tl, TrainState* keep, KvCache* cache,
                    std::vector<float>& hidden, const ModelPacks* packs) {
  const Config& c = m.config;
  const int64_t T = tl.T, H = c.hidden;
  if (keep) size_kept_layers(*keep, c.layers);
  std::vector<float>&x = m.work.x, &y = m.work.y;
  x.resize(static_cast<size_t>(T * H));
  y.resize(x.size());
  embed(m, tokens, T, x.data());
  for (int64_t l = 0; l < c.layers; ++l) {
    LayerActs& a = forward_acts(m, keep, l, x);
    a.resize(c, T);
    LayerAdapters adapters;
    layer_forward(c, m.rope, m.p.layers[l], tl, x.data(), a, cache, l, y.data(),
                  packs && !packs->layers.empty() ? &packs->layers[l] : nullptr, adapters_of(m, l, keep != nullptr, adapters));
    std::swap(x, y);
  }
  hidden.resize(x.size());
  std::vector<float> rms(static_cast<size_t>(T));
  rmsnorm_forward(x.data(), m.p.final_norm, T, H, c.eps, hidden.data(), rms.data());
  if (!keep) return;
  keep->final_x.assign(x.begin(), x.begin() + T * H);
  keep->final_rms = std::move(rms);
}

void score(Model& m, const int32_t* tokens, const TokenLayout& tl, const int32_t* targets, const grpo_score_options& o,
           bool train, float* logp, float* entropy) {
  TrainState& ts = m.train;
  ts.ready = false;
  std::vector<float> hidden;
  if (train) {
    if (m.lora) ts.lora_key = lora_forward_key(*m.lora, m.step), ++m.lora->forwards;
    score_layout(m, tokens, tl, targets, o, true, hidden, logp, entropy);
    m.release_work();
    ts.layout = tl;
    ts.tokens.assign(tokens, tokens + tl.T);
    ts.options = o;
    ts.ready = true;
    return;
  }
  for (size_t first = 0, last; first < tl.spans.size(); first = last) {
    const int64_t t0 = tl.spans[first].t0;
    for (last = first + 1; last < tl.spans.size() && tl.spans[last].t0 + tl.spans[last].len - t0 <= kScoreGroupTokens;) ++last;
    score_layout(m, tokens + t0, sub_layout(tl, first, last), targets + t0, o, false, hidden, logp + t0,
                 entropy ? entropy + t0 : nullptr);
  }
  m.release_work();
}

void backward(Model& m, const float* grad_logp, const float* grad_entropy) {
  TrainState& ts = m.train;
  if (!ts.ready) fail(GRPO_ERR_INVALID_ARGUMENT, "backward needs a preceding score with train = 1");
  m.ensure_grads();
  const Config& c = m.config;
  const int64_t T = ts.layout.T, H = c.hidden;
  const grpo_linear_logprob_options lo{ts.options.temperature, ts.options.ignore_index, 0, 0};
  const HeadRows& head = ts.head;
  const int64_t n = static_cast<int64_t>(head.rows.size());
  std::vector<float> head_grad_logp(static_cast<size_t>(n)), head_grad_entropy(grad_entropy ? head_grad_logp.size() : 0);
  for (int64_t i = 0; i < n; ++i) {
    head_grad_logp[i] = grad_logp[head.rows[i]];
    if (grad_entropy) head_grad_entropy[i] = grad_entropy[head.rows[i]];
  }
  std::vector<float> head_d_hidden(static_cast<size_t>(n * H), 0.0f);
  // the forward's lse spares the backward its statistics pass (4 products per tile, not 5), its kept logits the
  // recompute of each tile (3 products); a gradient of the entropy also needs the forward's entropies, else the
  // backward recomputes them
  const bool saved = !grad_entropy || !head.entropy.empty();
  const float* kept = saved && !head.logits.empty() ? head.logits.data() : nullptr;
  const float* saved_entropy = saved && grad_entropy ? head.entropy.data() : nullptr;
  const float* g_entropy = grad_entropy ? head_grad_entropy.data() : nullptr;
  if (n > 0 && !m.g.lm_head)  // frozen (LoRA): the gradient at the hidden states only
    linear_logprob::backward_frozen_weight(head.hidden.data(), m.p.lm_head, head.targets.data(), n, H, c.vocab, lo,
                                           {saved ? head.lse.data() : nullptr, saved_entropy, kept},
                                           head_grad_logp.data(), g_entropy, head_d_hidden.data());
  else if (n > 0 && kept)
    check(grpo_linear_logprob_backward_logits(head.hidden.data(), m.p.lm_head, nullptr, head.targets.data(), n, H, c.vocab,
                                              &lo, head.lse.data(), saved_entropy, kept, head_grad_logp.data(), g_entropy,
                                              head_d_hidden.data(), m.g.lm_head, nullptr, 1));
  else if (n > 0 && saved)
    check(grpo_linear_logprob_backward_saved(head.hidden.data(), m.p.lm_head, nullptr, head.targets.data(), n, H, c.vocab,
                                             &lo, head.lse.data(), saved_entropy, head_grad_logp.data(), g_entropy,
                                             head_d_hidden.data(), m.g.lm_head, nullptr, 1));
  else if (n > 0)
    check(grpo_linear_logprob_backward(head.hidden.data(), m.p.lm_head, nullptr, head.targets.data(), n, H, c.vocab, &lo,
                                       head_grad_logp.data(), g_entropy, head_d_hidden.data(), m.g.lm_head, nullptr, 1));
  std::vector<float>&d_hidden = ts.d_hidden, &dx = ts.dx;
  d_hidden.assign(static_cast<size_t>(T * H), 0.0f);
  dx.assign(d_hidden.size(), 0.0f);
  for (int64_t i = 0; i < n; ++i) std::copy_n(head_d_hidden.data() + i * H, H, d_hidden.data() + head.rows[i] * H);
  rmsnorm_backward(ts.final_x.data(), m.p.final_norm, ts.final_rms.data(), d_hidden.data(), T, H, dx.data(), m.g.final_norm);
  for (int64_t l = c.layers - 1; l >= 0; --l) {
    LayerAdapters adapters;
    const LayerAdapters* lora = adapters_of(m, l, true, adapters);
    layer_backward(c, m.rope, m.p.layers[l], m.g.layers[l], ts.layout, backward_acts(m, l, lora), ts.scratch, dx, lora);
  }
  if (m.g.embed) embed_backward(m, ts.tokens.data(), T, dx.data());
  ts.ready = false;  // the activation buffers stay allocated for the next training step
}

}  // namespace grpo::model
