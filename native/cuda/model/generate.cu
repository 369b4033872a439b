// Batched generation with a device KV cache (native/model/generate.cc's loop): one prefill over all prompts,
// then one forward of the still-running rows per step. Logits stay on the device; the CUDA sampler draws
// from them with the CPU's Philox stream, so tokens equal the CPU model's for the same logits and seed.
#include <algorithm>

#include "kernels.cuh"
#include "linear.cuh"
#include "model.cuh"
#include "pack.h"
#include "sample.h"
#include "sampling_device.cuh"

namespace grpo::cuda::model {

namespace {

using grpo::model::Span;

struct Run {
  std::vector<int64_t> active;             // sequences still generating
  std::vector<int64_t> length;             // [nseq] tokens in the cache (prompt + generated)
  std::vector<std::vector<int32_t>> text;  // [nseq] prompt + generated ids (for penalties)
};

KvCache make_cache(const Config& c, int64_t rows, int64_t max_len) {
  KvCache cache;
  cache.rows = rows;
  cache.max_len = max_len;
  cache.k.resize(static_cast<size_t>(c.layers));
  cache.v.resize(static_cast<size_t>(c.layers));
  for (int64_t l = 0; l < c.layers; ++l) {
    cache.k[l].resize(rows * max_len * c.kv_dim());
    cache.v[l].resize(rows * max_len * c.kv_dim());
  }
  return cache;
}

bool identity(const std::vector<int64_t>& rows, int64_t n) {
  for (int64_t i = 0; i < static_cast<int64_t>(rows.size()); ++i)
    if (rows[i] != i) return false;
  return static_cast<int64_t>(rows.size()) == n;
}

// Device buffers of the steps.
struct StepBuffers {
  DeviceArray<float> hidden, logits, picked, rows;  // logits [nseq, vocab]; other rows keep stale values
  DeviceArray<int64_t> pick, active;
  DeviceArray<int32_t> tokens;
  DeviceArray<float> greedy_logp;
};

// logits row active[i] = LM head of hidden row pick[i].
void logits_of(Model& m, const std::vector<int64_t>& pick, const std::vector<int64_t>& active, int64_t nseq, StepBuffers& b) {
  const int64_t H = m.config.hidden, V = m.config.vocab, n = static_cast<int64_t>(pick.size());
  const float* hidden = b.hidden.get();
  if (!identity(pick, static_cast<int64_t>(pick.size()))) {
    b.pick.upload(pick.data(), n);
    b.picked.resize(n * H);
    copy_rows(hidden, b.pick.get(), b.picked.get(), nullptr, n, H);
    hidden = b.picked.get();
  }
  if (identity(active, nseq)) return linear_forward(hidden, m.p.lm_head, nullptr, n, H, V, b.logits.get());
  b.active.upload(active.data(), n);
  b.rows.resize(n * V);
  linear_forward(hidden, m.p.lm_head, nullptr, n, H, V, b.rows.get());
  copy_rows(b.rows.get(), nullptr, b.logits.get(), b.active.get(), n, V);
}

grpo::model::History history_of(const Run& run) {
  grpo::model::History h;
  h.offsets.push_back(0);
  for (const auto& ids : run.text) {
    h.ids.insert(h.ids.end(), ids.begin(), ids.end());
    h.offsets.push_back(static_cast<int32_t>(h.ids.size()));
  }
  return h;
}

// sample.cc's sample_step on device logits: the sampler's logp_raw, or log-softmax at the argmax for greedy rows.
void sample_step(StepBuffers& b, int64_t nseq, int64_t vocab, const grpo_sampling_params& base, int64_t step,
                 const grpo::model::History& history, int32_t* tokens, float* logp) {
  grpo_sampling_params p = base;
  p.step = static_cast<uint64_t>(step);
  p.history = history.offsets.empty() ? nullptr : history.ids.data();
  p.history_offsets = history.offsets.empty() ? nullptr : history.offsets.data();
  try {
    sampling::sample_device(b.logits.get(), nseq, vocab, p, tokens, logp);
  } catch (const Error& e) {
    fail(e.status, "sampling: %s", e.what());
  }
  if (!p.temperature || std::none_of(p.temperature, p.temperature + nseq, [](float t) { return t == 0.0f; })) return;
  b.tokens.upload(tokens, nseq);
  b.greedy_logp.resize(nseq);
  log_softmax_at(b.logits.get(), b.tokens.get(), nseq, vocab, b.greedy_logp.get());
  std::vector<float> greedy(static_cast<size_t>(nseq));
  b.greedy_logp.download(greedy.data());
  for (int64_t r = 0; r < nseq; ++r)
    if (p.temperature[r] == 0.0f) logp[r] = greedy[r];
}

bool is_stop(const grpo_generate_options& o, int32_t token) {
  return std::find(o.stop_tokens, o.stop_tokens + o.num_stop_tokens, token) != o.stop_tokens + o.num_stop_tokens;
}

}  // namespace

void generate(Model& m, const int32_t* prompts, const int64_t* offsets, int64_t nseq, const grpo_generate_options& o,
              int32_t* out_tokens, float* out_logp, int64_t* out_lengths, uint8_t* truncated) {
  const Config& c = m.config;
  const int64_t N = o.max_new_tokens;
  const TokenLayout tl = grpo::model::pack_sequences(c, prompts, offsets, nseq);
  int64_t longest = 0;
  for (const Span& s : tl.spans) longest = std::max(longest, s.len);
  if (longest >= c.max_positions)
    fail(GRPO_ERR_SHAPE, "a prompt of %lld tokens leaves no room under max_position_embeddings = %lld",
         static_cast<long long>(longest), static_cast<long long>(c.max_positions));
  std::fill(out_tokens, out_tokens + nseq * N, -1);
  std::fill(out_logp, out_logp + nseq * N, 0.0f);
  std::fill(out_lengths, out_lengths + nseq, 0);
  std::fill(truncated, truncated + nseq, 0);
  if (N == 0) return;
  KvCache cache = make_cache(c, nseq, std::min(longest + N, c.max_positions));
  m.ensure_rope(cache.max_len);
  Run run{{}, std::vector<int64_t>(static_cast<size_t>(nseq)), std::vector<std::vector<int32_t>>(static_cast<size_t>(nseq))};
  const bool penalties = grpo::model::uses_penalties(*o.sampling);
  StepBuffers b;
  b.logits.assign_zero(nseq * c.vocab);
  TokenMap map;
  upload_map(prompts, tl, cache.max_len, map);
  forward_hidden(m, map, nullptr, &cache, b.hidden);
  std::vector<int64_t> pick;
  for (const Span& s : tl.spans) {
    run.active.push_back(s.cache_row);
    run.length[s.cache_row] = s.len;
    if (penalties) run.text[s.cache_row].assign(prompts + s.t0, prompts + s.t0 + s.len);
    pick.push_back(s.t0 + s.len - 1);
  }
  std::vector<int32_t> tokens(static_cast<size_t>(nseq));
  std::vector<float> logp(static_cast<size_t>(nseq));
  for (int64_t step = 0;; ++step) {
    logits_of(m, pick, run.active, nseq, b);
    sample_step(b, nseq, c.vocab, *o.sampling, step, penalties ? history_of(run) : grpo::model::History{}, tokens.data(),
                logp.data());
    std::vector<int64_t> still;
    for (int64_t r : run.active) {
      out_tokens[r * N + step] = tokens[r];
      out_logp[r * N + step] = logp[r];
      out_lengths[r] = step + 1;
      if (penalties) run.text[r].push_back(tokens[r]);
      if (is_stop(o, tokens[r])) continue;
      if (step + 1 == N || run.length[r] == cache.max_len) truncated[r] = 1;
      else still.push_back(r);
    }
    run.active.swap(still);
    if (run.active.empty()) return m.release_work();
    // One token per running row, at position length[r], cache row r.
    TokenLayout next;
    std::vector<int32_t> ids;
    pick.clear();
    for (int64_t r : run.active) {
      next.spans.push_back({next.T, 1, run.length[r], r});
      next.positions.push_back(run.length[r]++);
      ids.push_back(tokens[r]);
      pick.push_back(next.T++);
    }
    upload_map(ids.data(), next, cache.max_len, map);
    forward_hidden(m, map, nullptr, &cache, b.hidden);
  }
}

}  // namespace grpo::cuda::model
