#include "pack.h"

#include "runtime/error.h"

namespace grpo::model {

TokenLayout pack_sequences(const Config& c, const int32_t* tokens, const int64_t* offsets, int64_t nseq) {
  if (nseq < 1) fail(GRPO_ERR_SHAPE, "need at least one sequence (got %lld)", static_cast<long long>(nseq));
  if (offsets[0] != 0) fail(GRPO_ERR_SHAPE, "seq_offsets[0] must be 0 (got %lld)", static_cast<long long>(offsets[0]));
  TokenLayout tl;
  for (int64_t s = 0; s < nseq; ++s) {
    const int64_t len = offsets[s + 1] - offsets[s];
    if (len < 1) fail(GRPO_ERR_SHAPE, "sequence %lld is empty or offsets decrease", static_cast<long long>(s));
    if (len > c.max_positions)
      fail(GRPO_ERR_SHAPE, "sequence %lld has %lld tokens, more than max_position_embeddings = %lld", static_cast<long long>(s),
           static_cast<long long>(len), static_cast<long long>(c.max_positions));
    tl.spans.push_back({offsets[s], len, 0, s});
    for (int64_t i = 0; i < len; ++i) tl.positions.push_back(i);
  }
  tl.T = offsets[nseq];
  for (int64_t t = 0; t < tl.T; ++t)
    if (tokens[t] < 0 || tokens[t] >= c.vocab)
      fail(GRPO_ERR_INDEX_RANGE, "tokens[%lld] = %d is outside the vocabulary [0, %lld)", static_cast<long long>(t), tokens[t],
           static_cast<long long>(c.vocab));
  return tl;
}

}  // namespace grpo::model
