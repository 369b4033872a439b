// Batched generation with a device KV cache (native/model/generate.cc's loop; the bookkeeping is shared through
// decode_loop.h): one prefill over all prompts, then one forward of the still-running rows per step. Logits stay
// on the device; the CUDA sampler draws from them with the CPU's Philox stream, so tokens equal the CPU model's
// for the same logits and seed.
#include <algorithm>

#include "decode_loop.h"
#include "kernels.cuh"
#include "linear.cuh"
#include "model.cuh"
#include "pack.h"
#include "sample.h"
#include "sampling_device.cuh"

namespace grpo::cuda::model {

namespace {

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

// sample.cc's sample_step on device logits: the sampler's logp_raw, or log-softmax at the argmax for greedy rows.
void sample_step(StepBuffers& b, int64_t nseq, int64_t vocab, const grpo_sampling_params& base, int64_t step,
                 const grpo::model::History& history, int32_t* tokens, float* logp) {
  const grpo_sampling_params p = grpo::model::step_params(base, step, history);
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

}  // namespace

void generate(Model& m, const int32_t* prompts, const int64_t* offsets, int64_t nseq, const grpo_generate_options& o,
              int32_t* out_tokens, float* out_logp, int64_t* out_lengths, uint8_t* truncated) {
  const Config& c = m.config;
  const grpo::model::DecodeOutputs out{out_tokens, out_logp, out_lengths, truncated};
  const TokenLayout tl = grpo::model::pack_sequences(c, prompts, offsets, nseq);
  const int64_t cache_len = grpo::model::start_decoding(c, tl, o, out);
  if (cache_len == 0) return;
  KvCache cache = make_cache(c, nseq, cache_len);
  m.ensure_rope(cache_len);
  grpo::model::DecodeLoop loop(o, nseq, cache_len, tl, prompts);
  StepBuffers b;
  b.logits.assign_zero(nseq * c.vocab);
  TokenMap map;
  upload_map(prompts, tl, cache_len, map);
  forward_hidden(m, map, nullptr, &cache, b.hidden);
  for (int64_t step = 0;; ++step) {
    logits_of(m, loop.pick, loop.active, nseq, b);
    sample_step(b, nseq, c.vocab, *o.sampling, step, loop.history(), loop.tokens.data(), loop.logp.data());
    if (!loop.advance(step, out)) return m.release_work();
    upload_map(loop.ids.data(), loop.next, cache_len, map);
    forward_hidden(m, map, nullptr, &cache, b.hidden);
  }
}

}  // namespace grpo::cuda::model
