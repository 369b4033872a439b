// Internal to the tile GEMMs (tile_gemm.cu, tile_gemm_bf16.cu): the arguments of one call, the staging of op(A)
// and op(B) tiles into shared memory as [m][k] and [n][k] whatever their transposition (the global loads walk
// the contiguous dimension; float or bf16 elements converted to the tile's type on the way), the C epilogue and
// the grid.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "device.cuh"

namespace grpo::cuda::gemm_tiles {

template <typename TA, typename TB>  // each float or __nv_bfloat16
struct Operands {
  bool trans_a, trans_b;
  int64_t M, N, K;
  float alpha;
  const TA* A;
  int64_t lda;
  const TB* B;
  int64_t ldb;
  float beta;
  float* C;
  int64_t ldc;
};

// A value as an element of a tile of type S: float tiles hold floats; bf16 tiles round floats to nearest even.
template <typename S>
struct Element;
template <>
struct Element<float> {
  __device__ static float from(float x) { return x; }
};
template <>
struct Element<__nv_bfloat16> {
  __device__ static __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
  __device__ static __nv_bfloat16 from(__nv_bfloat16 x) { return x; }
};

// a[m][k] = op(A)[m0 + m][k0 + k] and b[n][k] = op(B)[k0 + k][n0 + n] for the kTileM × kTileN × kTileK tile,
// zero outside the matrices.
template <int kTileM, int kTileN, int kTileK, int kThreads, typename S, int kLd, typename TA, typename TB>
__device__ void stage(const Operands<TA, TB>& g, int64_t m0, int64_t n0, int64_t k0, S (*a)[kLd], S (*b)[kLd]) {
  const S zero = Element<S>::from(0.0f);
  for (int i = threadIdx.x; i < kTileM * kTileK; i += kThreads) {
    const int m = g.trans_a ? i % kTileM : i / kTileK, k = g.trans_a ? i / kTileM : i % kTileK;
    const int64_t gm = m0 + m, gk = k0 + k;
    a[m][k] = gm < g.M && gk < g.K ? Element<S>::from(g.trans_a ? g.A[gk * g.lda + gm] : g.A[gm * g.lda + gk]) : zero;
  }
  for (int i = threadIdx.x; i < kTileN * kTileK; i += kThreads) {
    const int n = g.trans_b ? i / kTileK : i % kTileN, k = g.trans_b ? i % kTileK : i / kTileN;
    const int64_t gn = n0 + n, gk = k0 + k;
    b[n][k] = gn < g.N && gk < g.K ? Element<S>::from(g.trans_b ? g.B[gn * g.ldb + gk] : g.B[gk * g.ldb + gn]) : zero;
  }
}

__device__ inline float as_float(float x) { return x; }
__device__ inline float as_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// The FMA path of architectures without the tensor-core type (sm_75): acc[e] += Σ_k a[i][k] · b[j][k] over one
// staged tile, for the outputs (i, j) = ((threadIdx.x + e · kThreads) / kTileN, … % kTileN) of this thread.
template <int kTileN, int kTileK, int kThreads, int kPerThread, typename S, int kLd>
__device__ void fma_tile(const S (*a)[kLd], const S (*b)[kLd], float (&acc)[kPerThread]) {
  for (int e = 0; e < kPerThread; ++e) {
    const int i = (threadIdx.x + e * kThreads) / kTileN, j = (threadIdx.x + e * kThreads) % kTileN;
    for (int k = 0; k < kTileK; ++k) acc[e] = fmaf(as_float(a[i][k]), as_float(b[j][k]), acc[e]);
  }
}

// C[m, n] = alpha · product + beta · C[m, n] (beta = 0 ignores C) inside the matrix.
template <typename TA, typename TB>
__device__ void write_c(const Operands<TA, TB>& g, int64_t m, int64_t n, float product) {
  if (m >= g.M || n >= g.N) return;
  float* c = g.C + m * g.ldc + n;
  *c = g.beta == 0.0f ? g.alpha * product : g.alpha * product + g.beta * *c;
}

// One block per output tile: x over column tiles, y over row tiles (at most 65535).
inline dim3 grid_for(int64_t M, int64_t N, int tile_m, int tile_n, const char* name) {
  const dim3 grid(static_cast<unsigned>((N + tile_n - 1) / tile_n), static_cast<unsigned>((M + tile_m - 1) / tile_m));
  if ((M + tile_m - 1) / tile_m > 65535)
    fail(GRPO_ERR_SHAPE, "%s: M = %lld needs more than 65535 row tiles", name, static_cast<long long>(M));
  return grid;
}

}  // namespace grpo::cuda::gemm_tiles
