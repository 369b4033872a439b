#include "kernels.cuh"

#include <cmath>

#include "reduce.cuh"

namespace grpo::cuda::model {

namespace {

constexpr int kRowThreads = 256;
constexpr int64_t kChunkRows = 64;  // rows per partial of a column sum

__device__ int64_t thread_index() { return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; }
__device__ int64_t thread_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

unsigned row_grid(int64_t rows) { return static_cast<unsigned>(rows < 1 ? 1 : rows < 65535 * 16 ? rows : 65535 * 16); }

void launched(const char* kernel) { check(cudaGetLastError(), kernel); }

__global__ void __launch_bounds__(kRowThreads) rmsnorm_forward_kernel(const float* x, const float* w, int64_t rows, int64_t n,
                                                                       float eps, float* y, float* inv_rms) {
  __shared__ double scratch[kMaxWarps];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* row = x + r * n;
    double sum = 0.0;
    for (int64_t h = threadIdx.x; h < n; h += blockDim.x) sum += static_cast<double>(row[h]) * row[h];
    sum = block_reduce(sum, Sum{}, scratch);
    const float inv = static_cast<float>(1.0 / sqrt(sum / static_cast<double>(n) + static_cast<double>(eps)));
    if (inv_rms && threadIdx.x == 0) inv_rms[r] = inv;
    for (int64_t h = threadIdx.x; h < n; h += blockDim.x) y[r * n + h] = (row[h] * inv) * w[h];
  }
}

// dx = r·(w⊙dy) − x·r³·mean(x⊙w⊙dy)
__global__ void __launch_bounds__(kRowThreads) rmsnorm_dx_kernel(const float* x, const float* w, const float* inv_rms,
                                                                  const float* dy, int64_t rows, int64_t n, float* dx) {
  __shared__ double scratch[kMaxWarps];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *row = x + r * n, *g = dy + r * n;
    double dot = 0.0;
    for (int64_t h = threadIdx.x; h < n; h += blockDim.x) dot += static_cast<double>(row[h]) * w[h] * g[h];
    dot = block_reduce(dot, Sum{}, scratch);
    const float inv = inv_rms[r];
    const float c = static_cast<float>(dot / static_cast<double>(n)) * inv * inv * inv;
    for (int64_t h = threadIdx.x; h < n; h += blockDim.x) dx[r * n + h] += inv * w[h] * g[h] - row[h] * c;
  }
}

struct PlainTerm {
  const float* x;
  int64_t cols;
  __device__ float operator()(int64_t r, int64_t c) const { return x[r * cols + c]; }
};

struct NormWeightTerm {  // dy · x · r
  const float *x, *dy, *inv_rms;
  int64_t cols;
  __device__ float operator()(int64_t r, int64_t c) const { return dy[r * cols + c] * x[r * cols + c] * inv_rms[r]; }
};

// partial [chunks, cols]: chunk k sums rows [k·kChunkRows, ...) in order.
template <typename Term>
__global__ void column_partials_kernel(Term term, int64_t rows, int64_t cols, float* partial) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x, chunk = blockIdx.y;
  if (c >= cols) return;
  const int64_t end = min(rows, (chunk + 1) * kChunkRows);
  float sum = 0.0f;
  for (int64_t r = chunk * kChunkRows; r < end; ++r) sum += term(r, c);
  partial[chunk * cols + c] = sum;
}

__global__ void column_finish_kernel(const float* partial, int64_t chunks, int64_t cols, float* out) {
  for (int64_t c = thread_index(); c < cols; c += thread_stride()) {
    float sum = 0.0f;
    for (int64_t k = 0; k < chunks; ++k) sum += partial[k * cols + c];
    out[c] += sum;
  }
}

template <typename Term>
void column_sums_of(Term term, int64_t rows, int64_t cols, float* out, DeviceArray<float>& scratch) {
  if (rows == 0 || cols == 0) return;
  const int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;
  if (chunks > 65535) fail(GRPO_ERR_SHAPE, "column sums over %lld rows exceed the grid", static_cast<long long>(rows));
  scratch.resize(chunks * cols);
  const dim3 grid(static_cast<unsigned>((cols + kThreads - 1) / kThreads), static_cast<unsigned>(chunks));
  column_partials_kernel<<<grid, kThreads>>>(term, rows, cols, scratch.get());
  column_finish_kernel<<<blocks_for(cols), kThreads>>>(scratch.get(), chunks, cols, out);
  launched("column sums");
}

__global__ void add_bias_kernel(float* y, const float* b, int64_t rows, int64_t cols) {
  for (int64_t e = thread_index(); e < rows * cols; e += thread_stride()) y[e] += b[e % cols];
}

__global__ void add_into_kernel(float* y, const float* x, int64_t n) {
  for (int64_t e = thread_index(); e < n; e += thread_stride()) y[e] += x[e];
}

__global__ void rope_kernel(float* x, const int64_t* positions, const float* cos_table, const float* sin_table, int64_t T,
                            int64_t heads, int64_t half, float sign) {
  for (int64_t e = thread_index(); e < T * heads * half; e += thread_stride()) {
    const int64_t i = e % half, t = e / (half * heads);
    float* v = x + (e / half) * 2 * half;
    const float c = cos_table[positions[t] * half + i], s = sign * sin_table[positions[t] * half + i];
    const float a = v[i], b = v[i + half];
    v[i] = a * c - b * s;
    v[i + half] = b * c + a * s;
  }
}

__device__ float sigmoid(float z) { return 1.0f / (1.0f + expf(-z)); }

__global__ void swiglu_forward_kernel(const float* gate, const float* up, float* act, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_stride()) act[i] = gate[i] * sigmoid(gate[i]) * up[i];
}

__global__ void swiglu_backward_kernel(const float* gate, const float* up, float* d_gate, float* d_up, int64_t n) {
  for (int64_t i = thread_index(); i < n; i += thread_stride()) {
    const float s = sigmoid(gate[i]), silu = gate[i] * s, da = d_gate[i];
    d_up[i] = da * silu;
    d_gate[i] = da * up[i] * (s + silu * (1.0f - s));
  }
}

__global__ void embed_rows_kernel(const float* table, const int32_t* tokens, int64_t T, int64_t H, float* x) {
  for (int64_t e = thread_index(); e < T * H; e += thread_stride()) x[e] = table[tokens[e / H] * H + e % H];
}

__global__ void embed_backward_kernel(const int32_t* group_token, const int64_t* group_begin, const int64_t* order,
                                      int64_t groups, const float* dx, int64_t H, float* g_table) {
  for (int64_t k = blockIdx.x; k < groups; k += gridDim.x) {
    float* row = g_table + static_cast<int64_t>(group_token[k]) * H;
    for (int64_t h = threadIdx.x; h < H; h += blockDim.x) {
      float sum = row[h];
      for (int64_t i = group_begin[k]; i < group_begin[k + 1]; ++i) sum += dx[order[i] * H + h];
      row[h] = sum;
    }
  }
}

__global__ void copy_rows_kernel(const float* src, const int64_t* src_rows, float* dst, const int64_t* dst_rows, int64_t n,
                                 int64_t cols) {
  for (int64_t e = thread_index(); e < n * cols; e += thread_stride()) {
    const int64_t i = e / cols, c = e % cols;
    dst[(dst_rows ? dst_rows[i] : i) * cols + c] = src[(src_rows ? src_rows[i] : i) * cols + c];
  }
}

__global__ void __launch_bounds__(kRowThreads) log_softmax_at_kernel(const float* logits, const int32_t* tokens, int64_t rows,
                                                                      int64_t vocab, float* out) {
  __shared__ float fmax_scratch[kMaxWarps];
  __shared__ double sum_scratch[kMaxWarps];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* x = logits + r * vocab;
    float max = -INFINITY;
    for (int64_t v = threadIdx.x; v < vocab; v += blockDim.x) max = fmaxf(max, x[v]);
    max = block_reduce(max, Max{}, fmax_scratch);
    double sum = 0.0;
    for (int64_t v = threadIdx.x; v < vocab; v += blockDim.x) sum += exp(static_cast<double>(x[v] - max));
    sum = block_reduce(sum, Sum{}, sum_scratch);
    if (threadIdx.x == 0) out[r] = static_cast<float>(static_cast<double>(x[tokens[r]] - max) - log(sum));
  }
}

}  // namespace

void rmsnorm_forward(const float* x, const float* w, int64_t rows, int64_t n, float eps, float* y, float* inv_rms) {
  if (rows == 0) return;
  rmsnorm_forward_kernel<<<row_grid(rows), kRowThreads>>>(x, w, rows, n, eps, y, inv_rms);
  launched("rmsnorm forward");
}

void rmsnorm_backward(const float* x, const float* w, const float* inv_rms, const float* dy, int64_t rows, int64_t n,
                      float* dx, float* dw, DeviceArray<float>& scratch) {
  if (rows == 0) return;
  rmsnorm_dx_kernel<<<row_grid(rows), kRowThreads>>>(x, w, inv_rms, dy, rows, n, dx);
  launched("rmsnorm backward");
  column_sums_of(NormWeightTerm{x, dy, inv_rms, n}, rows, n, dw, scratch);
}

void column_sums(const float* x, int64_t rows, int64_t cols, float* out, DeviceArray<float>& scratch) {
  column_sums_of(PlainTerm{x, cols}, rows, cols, out, scratch);
}

void add_bias(float* y, const float* b, int64_t rows, int64_t cols) {
  add_bias_kernel<<<blocks_for(rows * cols), kThreads>>>(y, b, rows, cols);
  launched("add bias");
}

void add_into(float* y, const float* x, int64_t n) {
  add_into_kernel<<<blocks_for(n), kThreads>>>(y, x, n);
  launched("residual add");
}

void rope_apply(float* x, const int64_t* positions, const float* cos, const float* sin, int64_t T, int64_t heads,
                int64_t half, bool inverse) {
  rope_kernel<<<blocks_for(T * heads * half), kThreads>>>(x, positions, cos, sin, T, heads, half, inverse ? -1.0f : 1.0f);
  launched("rope");
}

void swiglu_forward(const float* gate, const float* up, float* act, int64_t n) {
  swiglu_forward_kernel<<<blocks_for(n), kThreads>>>(gate, up, act, n);
  launched("swiglu forward");
}

void swiglu_backward(const float* gate, const float* up, float* d_gate, float* d_up, int64_t n) {
  swiglu_backward_kernel<<<blocks_for(n), kThreads>>>(gate, up, d_gate, d_up, n);
  launched("swiglu backward");
}

void embed_rows(const float* table, const int32_t* tokens, int64_t T, int64_t H, float* x) {
  embed_rows_kernel<<<blocks_for(T * H), kThreads>>>(table, tokens, T, H, x);
  launched("embedding");
}

void embed_backward(const int32_t* group_token, const int64_t* group_begin, const int64_t* order, int64_t groups,
                    const float* dx, int64_t H, float* g_table) {
  if (groups == 0) return;
  embed_backward_kernel<<<row_grid(groups), kRowThreads>>>(group_token, group_begin, order, groups, dx, H, g_table);
  launched("embedding backward");
}

void copy_rows(const float* src, const int64_t* src_rows, float* dst, const int64_t* dst_rows, int64_t n, int64_t cols) {
  if (n == 0) return;
  copy_rows_kernel<<<blocks_for(n * cols), kThreads>>>(src, src_rows, dst, dst_rows, n, cols);
  launched("copy rows");
}

void log_softmax_at(const float* logits, const int32_t* tokens, int64_t rows, int64_t vocab, float* out) {
  if (rows == 0) return;
  log_softmax_at_kernel<<<row_grid(rows), kRowThreads>>>(logits, tokens, rows, vocab, out);
  launched("log-softmax at token");
}

}  // namespace grpo::cuda::model
