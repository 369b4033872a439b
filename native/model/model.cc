#include "model.h"

#include <algorithm>

#include "grpo/logprob.h"
#include "rmsnorm.h"
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

}  // namespace

Model::Model(const Config& c) : config(c), layout(make_layout(c)), rope(make_rope(c.head_dim, c.rope_theta)) {
  params.resize(static_cast<size_t>(layout.total));
  p = bind(config, layout, params.data());
}

Model::Model(const Model& o) : config(o.config), layout(o.layout), rope(o.rope), params(o.params) {
  p = bind(config, layout, params.data());
}

void Model::ensure_grads() {
  if (!grads.empty()) return;
  grads.assign(static_cast<size_t>(layout.total), 0.0f);
  g = bind(config, layout, grads.data());
}

void forward_hidden(Model& m, const int32_t* tokens, const TokenLayout& tl, TrainState* keep, KvCache* cache,
                    std::vector<float>& hidden) {
  const Config& c = m.config;
  const int64_t T = tl.T, H = c.hidden;
  if (keep) keep->layers.resize(static_cast<size_t>(c.layers));
  std::vector<float>&x = m.work.x, &y = m.work.y;
  x.resize(static_cast<size_t>(T * H));
  y.resize(x.size());
  embed(m, tokens, T, x.data());
  for (int64_t l = 0; l < c.layers; ++l) {
    LayerActs& a = keep ? keep->layers[l] : m.work.layer;
    a.resize(c, T);
    layer_forward(c, m.rope, m.p.layers[l], tl, x.data(), a, cache, l, y.data());
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
  forward_hidden(m, tokens, tl, train ? &ts : nullptr, nullptr, hidden);
  m.release_work();
  const grpo_linear_logprob_options lo{o.temperature, o.ignore_index, 0, 0};
  check(grpo_linear_logprob_forward(hidden.data(), m.p.lm_head, nullptr, targets, tl.T, m.config.hidden, m.config.vocab, &lo,
                                    logp, entropy, nullptr));
  if (!train) return;
  ts.layout = tl;
  ts.tokens.assign(tokens, tokens + tl.T);
  ts.targets.assign(targets, targets + tl.T);
  ts.final_hidden = std::move(hidden);
  ts.options = o;
  ts.ready = true;
}

void backward(Model& m, const float* grad_logp, const float* grad_entropy) {
  TrainState& ts = m.train;
  if (!ts.ready) fail(GRPO_ERR_INVALID_ARGUMENT, "backward needs a preceding score with train = 1");
  m.ensure_grads();
  const Config& c = m.config;
  const int64_t T = ts.layout.T, H = c.hidden;
  const grpo_linear_logprob_options lo{ts.options.temperature, ts.options.ignore_index, 0, 0};
  std::vector<float> d_hidden(static_cast<size_t>(T * H), 0.0f), dx(d_hidden.size(), 0.0f);
  check(grpo_linear_logprob_backward(ts.final_hidden.data(), m.p.lm_head, nullptr, ts.targets.data(), T, H, c.vocab, &lo,
                                     grad_logp, grad_entropy, d_hidden.data(), m.g.lm_head, nullptr, 1));
  rmsnorm_backward(ts.final_x.data(), m.p.final_norm, ts.final_rms.data(), d_hidden.data(), T, H, dx.data(), m.g.final_norm);
  LayerGrads scratch;
  for (int64_t l = c.layers - 1; l >= 0; --l)
    layer_backward(c, m.rope, m.p.layers[l], m.g.layers[l], ts.layout, ts.layers[l], scratch, dx);
  embed_backward(m, ts.tokens.data(), T, dx.data());
  ts.ready = false;  // the activation buffers stay allocated for the next training step
}

}  // namespace grpo::model
