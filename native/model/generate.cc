#include "generate.h"

#include <algorithm>

#include "error.h"
#include "linear.h"
#include "sample.h"

namespace grpo::model {

namespace {

struct Run {
  std::vector<int64_t> active;   // sequences still generating
  std::vector<int64_t> length;   // [nseq] tokens in the cache (prompt + generated)
  std::vector<std::vector<int32_t>> text;  // [nseq] prompt + generated ids (for penalties)
};

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
void logits_of(Model& m, const std::vector<float>& hidden, const std::vector<int64_t>& pick, const std::vector<int64_t>& active,
               std::vector<float>& logits, std::vector<float>& picked, std::vector<float>& rows) {
  const int64_t H = m.config.hidden, V = m.config.vocab, n = static_cast<int64_t>(pick.size());
  if (n * V == static_cast<int64_t>(logits.size()) && pick.back() == n - 1) {
    linear_forward(hidden.data(), m.p.lm_head, nullptr, n, H, V, logits.data(), false);
    return;
  }
  picked.resize(static_cast<size_t>(n * H));
  rows.resize(static_cast<size_t>(n * V));
  for (int64_t i = 0; i < n; ++i) std::copy_n(hidden.data() + pick[i] * H, H, picked.data() + i * H);
  linear_forward(picked.data(), m.p.lm_head, nullptr, n, H, V, rows.data(), false);
  for (int64_t i = 0; i < n; ++i) std::copy_n(rows.data() + i * V, V, logits.data() + active[i] * V);
}

History history_of(const Run& run) {
  History h;
  h.offsets.push_back(0);
  for (const auto& ids : run.text) {
    h.ids.insert(h.ids.end(), ids.begin(), ids.end());
    h.offsets.push_back(static_cast<int32_t>(h.ids.size()));
  }
  return h;
}

bool is_stop(const grpo_generate_options& o, int32_t token) {
  return std::find(o.stop_tokens, o.stop_tokens + o.num_stop_tokens, token) != o.stop_tokens + o.num_stop_tokens;
}

}  // namespace

void generate(Model& m, const int32_t* prompts, const int64_t* offsets, int64_t nseq, const grpo_generate_options& o,
              int32_t* out_tokens, float* out_logp, int64_t* out_lengths, uint8_t* truncated) {
  const Config& c = m.config;
  const int64_t N = o.max_new_tokens;
  TokenLayout tl = pack_sequences(c, prompts, offsets, nseq);
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
  Run run{{}, std::vector<int64_t>(static_cast<size_t>(nseq)), std::vector<std::vector<int32_t>>(static_cast<size_t>(nseq))};
  const bool penalties = uses_penalties(*o.sampling);
  std::vector<float> hidden, logits(static_cast<size_t>(nseq * c.vocab)), picked, rows;
  std::vector<int64_t> pick;
  forward_hidden(m, prompts, tl, nullptr, &cache, hidden);
  for (const Span& s : tl.spans) {
    run.active.push_back(s.cache_row);
    run.length[s.cache_row] = s.len;
    if (penalties) run.text[s.cache_row].assign(prompts + s.t0, prompts + s.t0 + s.len);
    pick.push_back(s.t0 + s.len - 1);
  }
  std::vector<int32_t> tokens(static_cast<size_t>(nseq));
  std::vector<float> logp(static_cast<size_t>(nseq));
  for (int64_t step = 0;; ++step) {
    logits_of(m, hidden, pick, run.active, logits, picked, rows);
    sample_step(logits.data(), nseq, c.vocab, *o.sampling, step, penalties ? history_of(run) : History{}, tokens.data(), logp.data());
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
    forward_hidden(m, ids.data(), next, nullptr, &cache, hidden);
  }
}

}  // namespace grpo::model
