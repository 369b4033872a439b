#include "attention.cuh"

#include <cmath>

#include "device.cuh"
#include "reduce.cuh"

namespace grpo::cuda::model {

namespace {

constexpr int kAttnThreads = 128;  // also the keys (queries) per chunk

struct Args {
  AttnShape s;
  const float *q, *k, *v, *out, *lse, *dout, *delta;
  QueryMap map;
  int64_t T, q_ld, kv_ld, group;
  float scale;
  float *o, *o_lse, *dq, *dk, *dv, *o_delta;
};

__device__ float dot(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
  for (int64_t e = 0; e < n; ++e) sum += a[e] * b[e];
  return sum;
}

// The keys of this block's (query token t = blockIdx.x, head h = blockIdx.y): its q row goes to shared qs,
// the shared accumulator acc is zeroed.
struct Query {
  int64_t t, h, keys;
  const float *k, *v;  // key / value row 0 of t's kv head
};

__device__ Query load_query(const Args& a, float* qs, float* acc) {
  const int64_t hd = a.s.head_dim, t = blockIdx.x, h = blockIdx.y, g = h / a.group;
  const int64_t first = a.map.key_begin[t] * a.kv_ld + g * hd;
  for (int64_t e = threadIdx.x; e < hd; e += blockDim.x) {
    qs[e] = a.q[t * a.q_ld + h * hd + e];
    acc[e] = 0.0f;
  }
  __syncthreads();
  return {t, h, a.map.positions[t] + 1, a.k + first, a.v + first};
}

// Dynamic shared memory: q [head_dim], acc [head_dim], chunk [kAttnThreads].
__global__ void __launch_bounds__(kAttnThreads) forward_kernel(Args a) {
  extern __shared__ float shared[];
  __shared__ float scratch[kMaxWarps];
  const int64_t hd = a.s.head_dim;
  float *qs = shared, *acc = shared + hd, *chunk = shared + 2 * hd;
  const Query qr = load_query(a, qs, acc);
  const int64_t t = qr.t, h = qr.h, keys = qr.keys;
  const float *k = qr.k, *v = qr.v;
  float max = -INFINITY, sum = 0.0f;
  for (int64_t j0 = 0; j0 < keys; j0 += kAttnThreads) {
    const int64_t j = j0 + threadIdx.x;
    const float score = j < keys ? a.scale * dot(qs, k + j * a.kv_ld, hd) : -INFINITY;
    const float new_max = fmaxf(max, block_reduce(score, Max{}, scratch));
    const float p = j < keys ? expf(score - new_max) : 0.0f;
    chunk[threadIdx.x] = p;
    const float factor = expf(max - new_max);  // 0 on the first chunk
    sum = sum * factor + block_reduce(p, Sum{}, scratch);  // block_reduce's barriers publish chunk
    const int64_t n = min(static_cast<int64_t>(kAttnThreads), keys - j0);
    for (int64_t e = threadIdx.x; e < hd; e += blockDim.x) {
      float o = acc[e] * factor;
      for (int64_t i = 0; i < n; ++i) o += chunk[i] * v[(j0 + i) * a.kv_ld + e];
      acc[e] = o;
    }
    max = new_max;
    __syncthreads();  // chunk is rewritten next
  }
  for (int64_t e = threadIdx.x; e < hd; e += blockDim.x) a.o[t * a.q_ld + h * hd + e] = acc[e] / sum;
  if (threadIdx.x == 0) a.o_lse[t * a.s.heads + h] = max + logf(sum);
}

// delta[t, h] = dO · O (one thread per (t, h))
__global__ void delta_kernel(Args a) {
  const int64_t hd = a.s.head_dim;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < a.T * a.s.heads;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = i / a.s.heads, h = i % a.s.heads;
    a.o_delta[i] = dot(a.dout + t * a.q_ld + h * hd, a.out + t * a.q_ld + h * hd, hd);
  }
}

// P and dS = P ⊙ (dO·v − delta) of query t (row q), head h, at the key row k and value row v.
struct Grad {
  float p, ds;
};

__device__ Grad grad_at(const Args& a, int64_t t, int64_t h, const float* q, const float* k, const float* v) {
  const int64_t hd = a.s.head_dim;
  const float score = a.scale * dot(q, k, hd);
  const float p = expf(fminf(score - a.lse[t * a.s.heads + h], 0.0f));
  const float dp = dot(a.dout + t * a.q_ld + h * hd, v, hd);
  return {p, p * (dp - a.delta[t * a.s.heads + h])};
}

// dq[t, h] = scale · Σ_j dS_j · k_j. Shared: q [head_dim], acc [head_dim], ds [kAttnThreads].
__global__ void __launch_bounds__(kAttnThreads) dq_kernel(Args a) {
  extern __shared__ float shared[];
  const int64_t hd = a.s.head_dim;
  float *qs = shared, *acc = shared + hd, *ds = shared + 2 * hd;
  const Query qr = load_query(a, qs, acc);
  const int64_t t = qr.t, h = qr.h, keys = qr.keys;
  const float *k = qr.k, *v = qr.v;
  for (int64_t j0 = 0; j0 < keys; j0 += kAttnThreads) {
    const int64_t j = j0 + threadIdx.x;
    ds[threadIdx.x] = j < keys ? grad_at(a, t, h, qs, k + j * a.kv_ld, v + j * a.kv_ld).ds : 0.0f;
    __syncthreads();
    const int64_t n = min(static_cast<int64_t>(kAttnThreads), keys - j0);
    for (int64_t e = threadIdx.x; e < hd; e += blockDim.x) {
      float sum = acc[e];
      for (int64_t i = 0; i < n; ++i) sum += ds[i] * k[(j0 + i) * a.kv_ld + e];
      acc[e] = sum;
    }
    __syncthreads();
  }
  for (int64_t e = threadIdx.x; e < hd; e += blockDim.x) a.dq[t * a.q_ld + h * hd + e] = a.scale * acc[e];
}

// dk[j, g] = scale · Σ_{h in g} Σ_{i >= j} dS_ij · q_i;  dv[j, g] = Σ P_ij · dO_i  (key row j = token j).
// Shared: acc_k [head_dim], acc_v [head_dim], p [kAttnThreads], ds [kAttnThreads].
__global__ void __launch_bounds__(kAttnThreads) dkdv_kernel(Args a) {
  extern __shared__ float shared[];
  const int64_t hd = a.s.head_dim;
  float *acc_k = shared, *acc_v = shared + hd, *ps = shared + 2 * hd, *ds = ps + kAttnThreads;
  const int64_t j = blockIdx.x, g = blockIdx.y, end = a.map.query_end[j];
  const float* k = a.k + j * a.kv_ld + g * hd;
  const float* v = a.v + j * a.kv_ld + g * hd;
  for (int64_t e = threadIdx.x; e < hd; e += blockDim.x) acc_k[e] = acc_v[e] = 0.0f;
  __syncthreads();
  for (int64_t h = g * a.group; h < (g + 1) * a.group; ++h)
    for (int64_t i0 = j; i0 < end; i0 += kAttnThreads) {
      const int64_t i = i0 + threadIdx.x;
      const Grad gr = i < end ? grad_at(a, i, h, a.q + i * a.q_ld + h * hd, k, v) : Grad{0.0f, 0.0f};
      ps[threadIdx.x] = gr.p;
      ds[threadIdx.x] = gr.ds;
      __syncthreads();
      const int64_t n = min(static_cast<int64_t>(kAttnThreads), end - i0);
      for (int64_t e = threadIdx.x; e < hd; e += blockDim.x) {
        float sk = acc_k[e], sv = acc_v[e];
        for (int64_t r = 0; r < n; ++r) {
          sk += ds[r] * a.q[(i0 + r) * a.q_ld + h * hd + e];
          sv += ps[r] * a.dout[(i0 + r) * a.q_ld + h * hd + e];
        }
        acc_k[e] = sk;
        acc_v[e] = sv;
      }
      __syncthreads();
    }
  for (int64_t e = threadIdx.x; e < hd; e += blockDim.x) {
    a.dk[j * a.kv_ld + g * hd + e] = a.scale * acc_k[e];
    a.dv[j * a.kv_ld + g * hd + e] = acc_v[e];
  }
}

Args make_args(const AttnShape& s, const float* q, const float* k, const float* v, const QueryMap& map, int64_t T) {
  Args a{};
  a.s = s;
  a.q = q;
  a.k = k;
  a.v = v;
  a.map = map;
  a.T = T;
  a.q_ld = s.heads * s.head_dim;
  a.kv_ld = s.kv_heads * s.head_dim;
  a.group = s.heads / s.kv_heads;
  a.scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  return a;
}

dim3 grid_of(int64_t tokens, int64_t heads) {
  if (tokens > 2147483647LL || heads > 65535) fail(GRPO_ERR_SHAPE, "attention grid too large");
  return dim3(static_cast<unsigned>(tokens), static_cast<unsigned>(heads));
}

size_t shared_bytes(const AttnShape& s) { return sizeof(float) * static_cast<size_t>(2 * s.head_dim + 2 * kAttnThreads); }

void prepare(const void* kernel, size_t bytes) {
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
        "attention shared memory");
}

}  // namespace

void attention_forward(const AttnShape& s, const float* q, const float* k, const float* v, const QueryMap& map, int64_t T,
                       float* out, float* lse) {
  if (T == 0) return;
  Args a = make_args(s, q, k, v, map, T);
  a.o = out;
  a.o_lse = lse;
  const size_t bytes = shared_bytes(s);
  prepare(reinterpret_cast<const void*>(forward_kernel), bytes);
  forward_kernel<<<grid_of(T, s.heads), kAttnThreads, bytes>>>(a);
  check(cudaGetLastError(), "attention forward");
}

void attention_backward(const AttnShape& s, const float* q, const float* k, const float* v, const QueryMap& map, int64_t T,
                        const float* out, const float* lse, const float* dout, float* dq, float* dk, float* dv, float* delta) {
  if (T == 0) return;
  Args a = make_args(s, q, k, v, map, T);
  a.out = out;
  a.lse = lse;
  a.dout = dout;
  a.o_delta = delta;
  a.dq = dq;
  a.dk = dk;
  a.dv = dv;
  delta_kernel<<<blocks_for(T * s.heads), kThreads>>>(a);
  check(cudaGetLastError(), "attention backward (delta)");
  a.delta = delta;
  const size_t bytes = shared_bytes(s);
  prepare(reinterpret_cast<const void*>(dq_kernel), bytes);
  prepare(reinterpret_cast<const void*>(dkdv_kernel), bytes);
  dq_kernel<<<grid_of(T, s.heads), kAttnThreads, bytes>>>(a);
  check(cudaGetLastError(), "attention backward (dq)");
  dkdv_kernel<<<grid_of(T, s.kv_heads), kAttnThreads, bytes>>>(a);
  check(cudaGetLastError(), "attention backward (dk, dv)");
}

}  // namespace grpo::cuda::model
