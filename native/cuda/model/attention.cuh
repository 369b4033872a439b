// Causal grouped-query attention on the GPU (native/model/attention.cc's math), simple and exact: one block
// per (query token, head) with an online softmax over key chunks in shared memory. Where each query's keys
// live is given per token, so training (keys = the layer's own k/v rows of the token's sequence) and
// generation (keys = a KV-cache row) share the kernels. Backward recomputes the probabilities from the
// stored log-sum-exp: one pass per (query, head) for dq, one per (key, kv head) for dk and dv, so every
// sum has one owner and a fixed order (no atomics).
#pragma once

#include <cstdint>

namespace grpo::cuda::model {

struct AttnShape {
  int64_t heads, kv_heads, head_dim;
};

// Device arrays [T] describing each query token.
struct QueryMap {
  const int64_t* positions;  // keys of token t: rows key_begin[t] .. key_begin[t] + positions[t] of k/v
  const int64_t* key_begin;
  const int64_t* query_end;  // training only: one past the last token of t's sequence (the queries that see key t)
};

// q, out [T, heads·head_dim]; k, v rows of kv_heads·head_dim; lse [T, heads].
void attention_forward(const AttnShape& s, const float* q, const float* k, const float* v, const QueryMap& map, int64_t T,
                       float* out, float* lse);

// Training layout (key rows = token rows). dq, dk, dv are overwritten; delta [T, heads] is scratch.
void attention_backward(const AttnShape& s, const float* q, const float* k, const float* v, const QueryMap& map, int64_t T,
                        const float* out, const float* lse, const float* dout, float* dq, float* dk, float* dv, float* delta);

}  // namespace grpo::cuda::model
