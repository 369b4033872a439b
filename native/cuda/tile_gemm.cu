// The float32 (3xTF32) GEMM; the bf16 one is tile_gemm_bf16.cu.
// 64×64 output tile per block of 4 warps (2×2, each 32×32 = 2×2 WMMA m16n16k8 fragments), K in steps of 32
// through shared memory (sm_75, without TF32 tensor cores, runs plain FMAs on the same tiles). Operands are
// staged as [m][k] and [n][k] whatever their transposition (tile_gemm_stage.cuh), so one inner loop serves all
// four cases.
#include <mma.h>

#include "device.cuh"
#include "tile_gemm.cuh"
#include "tile_gemm_stage.cuh"

namespace grpo::cuda {

namespace {

using namespace nvcuda;

constexpr int kTileM = 64, kTileN = 64, kTileK = 32;
constexpr int kPad = 4;  // keeps rows 16-byte aligned and spreads shared-memory banks
constexpr int kGemmThreads = 128;

using Operands = gemm_tiles::Operands<float, float>;

struct __align__(32) Tiles {
  float a[kTileM][kTileK + kPad];  // op(A)[m0 + i][k0 + k]
  float b[kTileN][kTileK + kPad];  // op(B)[k0 + k][n0 + j], stored [j][k] (column-major B)
};

__device__ void stage(const Operands& g, int64_t m0, int64_t n0, int64_t k0, Tiles& t) {
  gemm_tiles::stage<kTileM, kTileN, kTileK, kGemmThreads>(g, m0, n0, k0, t.a, t.b);
}

using Output = float[kTileM][kTileN + kPad];

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
// sm_75 has no TF32 tensor cores: plain float FMAs over the same staged tiles, 32 outputs per thread.

__device__ void accumulate(const Operands& g, int64_t m0, int64_t n0, Tiles& tiles, Output& out) {
  constexpr int kPerThread = kTileM * kTileN / kGemmThreads;
  float acc[kPerThread] = {};
  for (int64_t k0 = 0; k0 < g.K; k0 += kTileK) {
    stage(g, m0, n0, k0, tiles);
    __syncthreads();
    gemm_tiles::fma_tile<kTileN, kTileK, kGemmThreads>(tiles.a, tiles.b, acc);
    __syncthreads();
  }
  for (int e = 0; e < kPerThread; ++e)
    out[(threadIdx.x + e * kGemmThreads) / kTileN][(threadIdx.x + e * kGemmThreads) % kTileN] = acc[e];
}
#else

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 8, float>;

template <typename Fragment>
__device__ void split_tf32(const Fragment& x, Fragment& hi, Fragment& lo) {
  for (int e = 0; e < x.num_elements; ++e) {
    const float high = wmma::__float_to_tf32(x.x[e]);
    hi.x[e] = high;
    lo.x[e] = wmma::__float_to_tf32(x.x[e] - high);
  }
}

// hi·hi + hi·lo + lo·hi for one k-slice of 8, small terms first.
__device__ void multiply_slice(const Tiles& tiles, int wm, int wn, int kk, FragC (&acc)[2][2]) {
  FragA a[2][2];  // [i][hi, lo]
  FragB b[2][2];
  for (int i = 0; i < 2; ++i) {
    FragA raw_a;
    FragB raw_b;
    wmma::load_matrix_sync(raw_a, &tiles.a[wm + 16 * i][kk], kTileK + kPad);
    wmma::load_matrix_sync(raw_b, &tiles.b[wn + 16 * i][kk], kTileK + kPad);
    split_tf32(raw_a, a[i][0], a[i][1]);
    split_tf32(raw_b, b[i][0], b[i][1]);
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      wmma::mma_sync(acc[i][j], a[i][1], b[j][0], acc[i][j]);
      wmma::mma_sync(acc[i][j], a[i][0], b[j][1], acc[i][j]);
      wmma::mma_sync(acc[i][j], a[i][0], b[j][0], acc[i][j]);
    }
}

__device__ void accumulate(const Operands& g, int64_t m0, int64_t n0, Tiles& tiles, Output& out) {
  const int warp = threadIdx.x / 32, wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  FragC acc[2][2];
  for (auto& row : acc)
    for (auto& c : row) wmma::fill_fragment(c, 0.0f);
  for (int64_t k0 = 0; k0 < g.K; k0 += kTileK) {
    stage(g, m0, n0, k0, tiles);
    __syncthreads();
    for (int kk = 0; kk < kTileK; kk += 8) multiply_slice(tiles, wm, wn, kk, acc);
    __syncthreads();
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&out[wm + 16 * i][wn + 16 * j], acc[i][j], kTileN + kPad, wmma::mem_row_major);
}
#endif

__global__ void __launch_bounds__(kGemmThreads) gemm_kernel(Operands g) {
  __shared__ Tiles tiles;
  __shared__ __align__(32) Output out;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kTileM, n0 = static_cast<int64_t>(blockIdx.x) * kTileN;
  accumulate(g, m0, n0, tiles, out);
  __syncthreads();
  for (int e = threadIdx.x; e < kTileM * kTileN; e += kGemmThreads)
    gemm_tiles::write_c(g, m0 + e / kTileN, n0 + e % kTileN, out[e / kTileN][e % kTileN]);
}

}  // namespace

void tile_gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc, GemmPrecision precision) {
  if (precision == GemmPrecision::kBf16)
    return tile_gemm_bf16(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  if (M == 0 || N == 0) return;
  const dim3 grid = gemm_tiles::grid_for(M, N, kTileM, kTileN, "tile_gemm");
  gemm_kernel<<<grid, kGemmThreads>>>({trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc});
  check(cudaGetLastError(), "tile_gemm launch");
}

}  // namespace grpo::cuda
