// Causal grouped-query attention over segments. A segment is `len` consecutive query rows
// (tokens t0 ..) at positions p0 .. p0+len-1 whose keys/values are rows 0 .. p0+len-1 of k/v
// (row stride kv_heads·head_dim). Training points k/v at the layer's own activations (p0 = 0);
// generation points them into a row of the KV cache, so one kernel serves both.
#pragma once

#include <cstdint>
#include <vector>

namespace grpo::model {

struct AttnShape {
  int64_t heads, kv_heads, head_dim;
};

struct Segment {
  int64_t t0, len, p0;
  const float *k, *v;
  float *dk, *dv;  // backward only: gradients of the same rows (added into)
};

// q, out [T, heads·head_dim]; lse [T, heads] (log-sum-exp of the scaled scores, for backward; may be null)
void attention_forward(const AttnShape& s, const float* q, const std::vector<Segment>& segments, float* out, float* lse);

// dq [T, heads·head_dim] is overwritten; dk/dv of each segment are added into.
void attention_backward(const AttnShape& s, const float* q, const std::vector<Segment>& segments, const float* out,
                        const float* lse, const float* dout, float* dq);

}  // namespace grpo::model
