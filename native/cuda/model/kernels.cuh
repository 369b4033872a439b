// The model's small kernels (per-row and elementwise), launched on the default stream. Each mirrors the
// CPU function of native/model/ named in its comment; sums run in a fixed order (no float atomics), so
// two runs give the same bits.
#pragma once

#include <cstdint>

#include "device_array.cuh"

namespace grpo::cuda::model {

// rmsnorm.cc: y [rows, n] = (x · r) · w, r = 1 / sqrt(mean(x²) + eps) from a double sum; inv_rms [rows] or NULL.
void rmsnorm_forward(const float* x, const float* w, int64_t rows, int64_t n, float eps, float* y, float* inv_rms);

// rmsnorm.cc: dx [rows, n] += d/dx;  dw [n] += Σ_rows dy · x · r (rows summed in fixed chunks, chunks in order).
void rmsnorm_backward(const float* x, const float* w, const float* inv_rms, const float* dy, int64_t rows, int64_t n,
                      float* dx, float* dw, DeviceArray<float>& scratch);

// out [cols] += Σ_r x [rows, cols] (bias gradients).
void column_sums(const float* x, int64_t rows, int64_t cols, float* out, DeviceArray<float>& scratch);

// y [rows, cols] += b [cols]
void add_bias(float* y, const float* b, int64_t rows, int64_t cols);

// y [n] += x [n]
void add_into(float* y, const float* x, int64_t n);

// rope.cc: x [T, heads, 2·half] rotated by the host-computed table cos/sin [positions, half]; inverse = backward.
void rope_apply(float* x, const int64_t* positions, const float* cos, const float* sin, int64_t T, int64_t heads,
                int64_t half, bool inverse);

// mlp.cc: act = silu(gate) · up, all [n].
void swiglu_forward(const float* gate, const float* up, float* act, int64_t n);

// mlp.cc: d_gate holds d(act) on entry and d(gate) on return; d_up = d(act) · silu(gate).
void swiglu_backward(const float* gate, const float* up, float* d_gate, float* d_up, int64_t n);

// model.cc: x [T, H] = table[tokens[t]].
void embed_rows(const float* table, const int32_t* tokens, int64_t T, int64_t H, float* x);

// model.cc embed_backward: for each distinct token (groups of `order`, token order kept),
// g_table[token] += Σ dx[t] over its positions t in ascending order (one block owns one table row).
void embed_backward(const int32_t* group_token, const int64_t* group_begin, const int64_t* order, int64_t groups,
                    const float* dx, int64_t H, float* g_table);

// dst[dst_rows[i]] = src[src_rows[i]] for i < n (a NULL index is the identity), rows of `cols` floats.
void copy_rows(const float* src, const int64_t* src_rows, float* dst, const int64_t* dst_rows, int64_t n, int64_t cols);

// sample.cc log_softmax_at: out[r] = log-softmax(logits[r])[tokens[r]] with a double sum.
void log_softmax_at(const float* logits, const int32_t* tokens, int64_t rows, int64_t vocab, float* out);

}  // namespace grpo::cuda::model
