#include "generate.h"

#include <algorithm>

#include "error.h"
#include "linear.h"
#include "sample.h"

namespace grpo::model {

namespace {

struct Run {
  std::vector<int64_t> active;   // batch rows still generating
  std::vector<int64_t> length;   // [nseq] tokens in the cache (prompt + generated)
  std::vector<int32_t> last;     // [nseq] last sampled token
};

KvCache make_cache(const Config& c, int64_t rows, int64_t max_len) {
  KvCache cache{rows, max_len, c.kv_dim(), {}, {}};
  for (int64_t l = 0; l < c.layers; ++l) {
    cache.k.emplace_back(static_cast<size_t>(rows * max_len * c.kv_dim()));
    cache.v.emplace_back(static_cast<size_t>(rows * max_len * c.kv_dim()));
  }
  return cache;
}

// logits [rows.size(), vocab] of the hidden rows `pick` of hidden [·, H], then one sampled token per row.
void sample_rows(Model& m, const std::vector<float>& hidden, const std::vector<int64_t>& pick, const std::vector<StepRow>& rows,
                 const grpo_generate_options& o, std::vector<int32_t>& tokens, std::vector<float>& logp) {
  const int64_t H = m.config.hidden, V = m.config.vocab, n = static_cast<int64_t>(pick.size());
  std::vector<float> picked(static_cast<size_t>(n * H)), logits(static_cast<size_t>(n * V));
  for (int64_t i = 0; i < n; ++i) std::copy_n(hidden.data() + pick[i] * H, H, picked.data() + i * H);
  linear_forward(picked.data(), m.p.lm_head, nullptr, n, H, V, logits.data());
  tokens.resize(static_cast<size_t>(n));
  logp.resize(static_cast<size_t>(n));
  sample_step(logits.data(), n, V, rows.data(), o, tokens.data(), logp.data());
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
  Run run{{}, std::vector<int64_t>(static_cast<size_t>(nseq)), std::vector<int32_t>(static_cast<size_t>(nseq))};
  std::vector<float> hidden;
  std::vector<int64_t> pick;
  std::vector<StepRow> rows;
  forward_hidden(m, prompts, tl, nullptr, &cache, hidden);
  for (const Span& s : tl.spans) {
    run.active.push_back(s.cache_row);
    run.length[s.cache_row] = s.len;
    pick.push_back(s.t0 + s.len - 1);
    rows.push_back({s.cache_row, 0});
  }
  std::vector<int32_t> tokens;
  std::vector<float> logp;
  for (int64_t step = 0;; ++step) {
    sample_rows(m, hidden, pick, rows, o, tokens, logp);
    std::vector<int64_t> still;
    for (size_t i = 0; i < run.active.size(); ++i) {
      const int64_t r = run.active[i];
      out_tokens[r * N + step] = tokens[i];
      out_logp[r * N + step] = logp[i];
      out_lengths[r] = step + 1;
      run.last[r] = tokens[i];
      if (is_stop(o, tokens[i])) continue;
      if (step + 1 == N || run.length[r] == cache.max_len) truncated[r] = 1;
      else still.push_back(r);
    }
    run.active.swap(still);
    if (run.active.empty()) return;
    // One token per running row, at position length[r], cache row r.
    TokenLayout next;
    std::vector<int32_t> ids;
    pick.clear();
    rows.clear();
    for (int64_t r : run.active) {
      next.spans.push_back({next.T, 1, run.length[r], r});
      next.positions.push_back(run.length[r]++);
      ids.push_back(run.last[r]);
      pick.push_back(next.T++);
      rows.push_back({r, step + 1});
    }
    forward_hidden(m, ids.data(), next, nullptr, &cache, hidden);
  }
}

}  // namespace grpo::model
