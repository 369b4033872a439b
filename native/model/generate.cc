#include "generate.h"

#include <algorithm>

#include "decode_loop.h"
#include "linear.h"
#include "packed_weights.h"
#include "sample.h"

namespace grpo::model {

namespace {

KvCache make_cache(const Config& c, int64_t rows, int64_t max_len) {
  KvCache cache{rows, max_len, c.kv_dim(), {}, {}};
  for (int64_t l = 0; l < c.layers; ++l) {
    cache.k.emplace_back(static_cast<size_t>(rows * max_len * c.kv_dim()));
    cache.v.emplace_back(static_cast<size_t>(rows * max_len * c.kv_dim()));
  }
  return cache;
}

// logits [nseq, vocab]: row active[i] gets the LM head of hidden row pick[i] (other rows keep stale values).
// While every row is running (the common case) hidden and logits rows line up and nothing is copied.
void logits_of(Model& m, const ModelPacks& packs, const std::vector<float>& hidden, const std::vector<int64_t>& pick, const std::vector<int64_t>& active,
               std::vector<float>& logits, std::vector<float>& picked, std::vector<float>& rows) {
  const int64_t H = m.config.hidden, V = m.config.vocab, n = static_cast<int64_t>(pick.size());
  const PackedB* head = packs.layers.empty() ? nullptr : &packs.lm_head;
  if (n * V == static_cast<int64_t>(logits.size()) && pick.back() == n - 1) {
    linear_forward(hidden.data(), m.p.lm_head, nullptr, n, H, V, logits.data(), false, head);
    return;
  }
  picked.resize(static_cast<size_t>(n * H));
  rows.resize(static_cast<size_t>(n * V));
  for (int64_t i = 0; i < n; ++i) std::copy_n(hidden.data() + pick[i] * H, H, picked.data() + i * H);
  linear_forward(picked.data(), m.p.lm_head, nullptr, n, H, V, rows.data(), false, head);
  for (int64_t i = 0; i < n; ++i) std::copy_n(rows.data() + i * V, V, logits.data() + active[i] * V);
}

}  // namespace

void generate(Model& m, const int32_t* prompts, const int64_t* offsets, int64_t nseq, const grpo_generate_options& o,
              int32_t* out_tokens, float* out_logp, int64_t* out_lengths, uint8_t* truncated) {
  const Config& c = m.config;
  const DecodeOutputs out{out_tokens, out_logp, out_lengths, truncated};
  const TokenLayout tl = pack_sequences(c, prompts, offsets, nseq);
  const int64_t cache_len = start_decoding(c, tl, o, out);
  if (cache_len == 0) return;
  KvCache cache = make_cache(c, nseq, cache_len);
  DecodeLoop loop(o, nseq, cache_len, tl, prompts);
  const ModelPacks packs = pack_weights(c, m.p);
  std::vector<float> hidden, logits(static_cast<size_t>(nseq * c.vocab)), picked, rows;
  forward_hidden(m, prompts, tl, nullptr, &cache, hidden, &packs);
  for (int64_t step = 0;; ++step) {
    logits_of(m, packs, hidden, loop.pick, loop.active, logits, picked, rows);
    sample_step(logits.data(), nseq, c.vocab, *o.sampling, step, loop.history(), loop.tokens.data(), loop.logp.data());
    if (!loop.advance(step, out)) return m.release_work();
    forward_hidden(m, loop.ids.data(), loop.next, nullptr, &cache, hidden, &packs);
  }
}

}  // namespace grpo::model
