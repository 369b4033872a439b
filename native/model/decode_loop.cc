#include "decode_loop.h"

#include <algorithm>

#include "runtime/error.h"

namespace grpo::model {

namespace {

bool is_stop(const grpo_generate_options& o, int32_t token) {
  return std::find(o.stop_tokens, o.stop_tokens + o.num_stop_tokens, token) != o.stop_tokens + o.num_stop_tokens;
}

}  // namespace

int64_t start_decoding(const Config& c, const TokenLayout& prompts, const grpo_generate_options& o, const DecodeOutputs& out) {
  const int64_t N = o.max_new_tokens, nseq = static_cast<int64_t>(prompts.spans.size());
  int64_t longest = 0;
  for (const Span& s : prompts.spans) longest = std::max(longest, s.len);
  if (longest >= c.max_positions)
    fail(GRPO_ERR_SHAPE, "a prompt of %lld tokens leaves no room under max_position_embeddings = %lld",
         static_cast<long long>(longest), static_cast<long long>(c.max_positions));
  std::fill(out.tokens, out.tokens + nseq * N, -1);
  std::fill(out.logp, out.logp + nseq * N, 0.0f);
  std::fill(out.lengths, out.lengths + nseq, 0);
  std::fill(out.truncated, out.truncated + nseq, 0);
  return N == 0 ? 0 : std::min(longest + N, c.max_positions);
}

DecodeLoop::DecodeLoop(const grpo_generate_options& o, int64_t nseq, int64_t cache_len, const TokenLayout& prompts,
                       const int32_t* ids)
    : tokens(static_cast<size_t>(nseq)), logp(static_cast<size_t>(nseq)), o_(o), cache_len_(cache_len),
      penalties_(uses_penalties(*o.sampling)), length_(static_cast<size_t>(nseq)), text_(static_cast<size_t>(nseq)) {
  for (const Span& s : prompts.spans) {
    active.push_back(s.cache_row);
    length_[s.cache_row] = s.len;
    if (penalties_) text_[s.cache_row].assign(ids + s.t0, ids + s.t0 + s.len);
    pick.push_back(s.t0 + s.len - 1);
  }
}

History DecodeLoop::history() const {
  History h;
  if (!penalties_) return h;
  h.offsets.push_back(0);
  for (const auto& row : text_) {
    h.ids.insert(h.ids.end(), row.begin(), row.end());
    h.offsets.push_back(static_cast<int32_t>(h.ids.size()));
  }
  return h;
}

bool DecodeLoop::advance(int64_t step, const DecodeOutputs& out) {
  const int64_t N = o_.max_new_tokens;
  std::vector<int64_t> still;
  for (int64_t r : active) {
    out.tokens[r * N + step] = tokens[r];
    out.logp[r * N + step] = logp[r];
    out.lengths[r] = step + 1;
    if (penalties_) text_[r].push_back(tokens[r]);
    if (is_stop(o_, tokens[r])) continue;
    if (step + 1 == N || length_[r] == cache_len_) out.truncated[r] = 1;
    else still.push_back(r);
  }
  active.swap(still);
  if (active.empty()) return false;
  next = TokenLayout{};
  ids.clear();
  pick.clear();
  for (int64_t r : active) {
    next.spans.push_back({next.T, 1, length_[r], r});
    next.positions.push_back(length_[r]++);
    ids.push_back(tokens[r]);
    pick.push_back(next.T++);
  }
  return true;
}

}  // namespace grpo::model
