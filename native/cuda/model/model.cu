// Forward, score and backward of the whole decoder on the GPU (native/model/model.cc's structure).
#include "model.cuh"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels.cuh"
#include "linear_logprob_device.cuh"
#include "logprob/linear_logprob_checks.h"
#include "rope.h"

namespace grpo::cuda::model {

namespace {

// The embedding gradient's row owners: `order` lists token positions grouped by id (ascending t within a
// group), so one block sums each table row in the CPU's order.
struct EmbedGroups {
  DeviceArray<int32_t> token;
  DeviceArray<int64_t> begin, order;
  int64_t count = 0;
};

void upload_groups(const std::vector<int32_t>& tokens, EmbedGroups& groups) {
  std::vector<int64_t> order(tokens.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return tokens[a] < tokens[b]; });
  std::vector<int32_t> ids;
  std::vector<int64_t> begin;
  for (size_t i = 0; i < order.size(); ++i)
    if (i == 0 || tokens[order[i]] != tokens[order[i - 1]]) {
      ids.push_back(tokens[order[i]]);
      begin.push_back(static_cast<int64_t>(i));
    }
  begin.push_back(static_cast<int64_t>(order.size()));
  groups.count = static_cast<int64_t>(ids.size());
  groups.token.upload(ids.data(), groups.count);
  groups.begin.upload(begin.data(), groups.count + 1);
  groups.order.upload(order.data(), static_cast<int64_t>(order.size()));
}

grpo_linear_logprob_options head_options(const grpo_score_options& o) { return {o.temperature, o.ignore_index, 0, 0}; }

}  // namespace

Model::Model(const Config& c)
    : config(c), layout(grpo::model::make_layout(c)), rope(grpo::model::make_rope(c)) {
  params.assign_zero(layout.total);
  p = grpo::model::bind(config, layout, params.get());
}

void Model::ensure_grads() {
  if (!grads.empty()) return;
  grads.assign_zero(layout.total);
  g = grpo::model::bind(config, layout, grads.get());
}

// cos/sin of angle = float(pos) · inv_freq[i] in float32 (times the attention factor) on the host, as rope_apply does.
void Model::ensure_rope(int64_t positions) {
  if (positions <= rope_positions) return;
  const int64_t half = config.head_dim / 2, rows = std::min(std::max(positions, 2 * rope_positions), config.max_positions);
  std::vector<float> cos_t(static_cast<size_t>(rows * half)), sin_t(cos_t.size());
  for (int64_t pos = 0; pos < rows; ++pos)
    for (int64_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(pos) * rope.inv_freq[i];
      cos_t[pos * half + i] = rope.attention_factor * std::cos(angle);
      sin_t[pos * half + i] = rope.attention_factor * std::sin(angle);
    }
  rope_cos.upload(cos_t.data(), rows * half);
  rope_sin.upload(sin_t.data(), rows * half);
  rope_positions = rows;
}

void upload_map(const int32_t* tokens, const TokenLayout& tl, int64_t cache_len, TokenMap& map) {
  const size_t T = static_cast<size_t>(tl.T);
  std::vector<int64_t> key_begin(T), query_end(T), kv_slot(T);
  for (const auto& s : tl.spans)
    for (int64_t i = 0; i < s.len; ++i) {
      const int64_t t = s.t0 + i, row = s.cache_row * cache_len;
      key_begin[t] = cache_len > 0 ? row : s.t0;
      query_end[t] = s.t0 + s.len;
      kv_slot[t] = row + s.p0 + i;
    }
  map.T = tl.T;
  map.tokens.upload(tokens, tl.T);
  map.positions.upload(tl.positions.data(), tl.T);
  map.key_begin.upload(key_begin.data(), tl.T);
  map.query_end.upload(query_end.data(), tl.T);
  map.kv_slot.upload(kv_slot.data(), tl.T);
}

void forward_hidden(Model& m, const TokenMap& map, TrainState* keep, KvCache* cache, DeviceArray<float>& hidden) {
  const Config& c = m.config;
  const int64_t T = map.T, H = c.hidden;
  if (keep) keep->layers.resize(static_cast<size_t>(c.layers));
  DeviceArray<float>&x = m.work.x, &y = m.work.y;
  x.resize(T * H);
  y.resize(T * H);
  embed_rows(m.p.embed, map.tokens.get(), T, H, x.get());
  for (int64_t l = 0; l < c.layers; ++l) {
    LayerActs& a = keep ? keep->layers[l] : m.work.layer;
    a.resize(c, T);
    layer_forward(m, l, map, x.get(), a, cache, y.get());
    x.swap(y);
  }
  hidden.resize(T * H);
  DeviceArray<float> rms(T);
  rmsnorm_forward(x.get(), m.p.final_norm, T, H, c.eps, hidden.get(), rms.get());
  if (!keep) return;
  keep->final_x.copy_from(x);
  keep->final_rms.swap(rms);
}

void score(Model& m, const int32_t* tokens, const TokenLayout& tl, const int32_t* targets, const grpo_score_options& o,
           bool train, float* logp, float* entropy) {
  TrainState& ts = m.train;
  ts.ready = false;
  const grpo_linear_logprob_options head = head_options(o);
  linear_logprob_checks::options_and_shape(tl.T, m.config.hidden, m.config.vocab, &head);
  linear_logprob_checks::targets(targets, tl.T, m.config.vocab, o.ignore_index);
  int64_t longest = 0;
  for (const auto& s : tl.spans) longest = std::max(longest, s.len);
  m.ensure_rope(longest);
  upload_map(tokens, tl, 0, ts.map);
  ts.targets.upload(targets, tl.T);
  DeviceArray<float> hidden;
  forward_hidden(m, ts.map, train ? &ts : nullptr, nullptr, hidden);
  m.release_work();
  linear_logprob_forward_device(hidden.get(), m.p.lm_head, ts.targets.get(), tl.T, m.config.hidden, m.config.vocab,
                                head, logp, entropy);
  if (!train) return;
  ts.tokens.assign(tokens, tokens + tl.T);
  ts.final_hidden.swap(hidden);
  ts.options = o;
  ts.ready = true;
}

void backward(Model& m, const float* grad_logp, const float* grad_entropy) {
  TrainState& ts = m.train;
  if (!ts.ready) fail(GRPO_ERR_INVALID_ARGUMENT, "backward needs a preceding score with train = 1");
  const Config& c = m.config;
  const int64_t T = ts.map.T, H = c.hidden;
  linear_logprob_checks::all_finite(grad_logp, T, "grad_logp");
  linear_logprob_checks::all_finite(grad_entropy, grad_entropy ? T : 0, "grad_entropy");
  m.ensure_grads();
  DeviceArray<float> d_grad_logp, d_grad_entropy, d_hidden, dx;
  d_grad_logp.upload(grad_logp, T);
  if (grad_entropy) d_grad_entropy.upload(grad_entropy, T);
  d_hidden.assign_zero(T * H);
  dx.assign_zero(T * H);
  linear_logprob_backward_device(ts.final_hidden.get(), m.p.lm_head, ts.targets.get(), T, H, c.vocab, head_options(ts.options),
                                 d_grad_logp.get(), d_grad_entropy.get(), d_hidden.get(), m.g.lm_head);
  LayerGrads scratch;
  rmsnorm_backward(ts.final_x.get(), m.p.final_norm, ts.final_rms.get(), d_hidden.get(), T, H, dx.get(), m.g.final_norm,
                   scratch.sums);
  for (int64_t l = c.layers - 1; l >= 0; --l) layer_backward(m, l, ts.map, ts.layers[l], scratch, dx.get());
  EmbedGroups groups;
  upload_groups(ts.tokens, groups);
  embed_backward(groups.token.get(), groups.begin.get(), groups.order.get(), groups.count, dx.get(), H, m.g.embed);
  check_launch("model backward");
  ts.ready = false;  // the activation buffers stay allocated for the next training step
}

}  // namespace grpo::cuda::model
