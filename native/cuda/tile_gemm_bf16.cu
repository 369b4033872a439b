// tile_gemm_bf16 (tile_gemm.cuh): 128×128 output tile per block of 8 warps (4×2, each 32×64 = 2×4 WMMA
// m16n16k16 bf16 fragments with float32 accumulators), K in steps of 32 through shared memory, two blocks per
// SM. Operands are converted to bf16 while staged as [m][k] and [n][k] whatever their type and transposition
// (tile_gemm_stage.cuh), so one inner loop serves every case. sm_75 (no bf16 tensor cores) runs float FMAs
// over the same staged bf16 tiles.
#include <mma.h>

#include "device.cuh"
#include "tile_gemm.cuh"
#include "tile_gemm_stage.cuh"

namespace grpo::cuda {

namespace {

using namespace nvcuda;
using bf16 = __nv_bfloat16;

constexpr int kTileM = 128, kTileN = 128, kTileK = 32;
constexpr int kPad = 8;  // rows stay 16-byte aligned (WMMA ldm: a multiple of 8 bf16) and banks spread
constexpr int kGemmThreads = 256;

template <typename TA, typename TB>
using Operands = gemm_tiles::Operands<TA, TB>;

struct __align__(32) Tiles {
  bf16 a[kTileM][kTileK + kPad];  // op(A)[m0 + i][k0 + k]
  bf16 b[kTileN][kTileK + kPad];  // op(B)[k0 + k][n0 + j], stored [j][k] (column-major B)
};

template <typename TA, typename TB>
__device__ void stage(const Operands<TA, TB>& g, int64_t m0, int64_t n0, int64_t k0, Tiles& t) {
  gemm_tiles::stage<kTileM, kTileN, kTileK, kGemmThreads>(g, m0, n0, k0, t.a, t.b);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
// sm_75: float FMAs on the widened bf16 values, 64 outputs per thread.

template <typename TA, typename TB>
__device__ void multiply_block(const Operands<TA, TB>& g, int64_t m0, int64_t n0, Tiles& tiles) {
  constexpr int kPerThread = kTileM * kTileN / kGemmThreads;
  float acc[kPerThread] = {};
  for (int64_t k0 = 0; k0 < g.K; k0 += kTileK) {
    stage(g, m0, n0, k0, tiles);
    __syncthreads();
    gemm_tiles::fma_tile<kTileN, kTileK, kGemmThreads>(tiles.a, tiles.b, acc);
    __syncthreads();
  }
  for (int e = 0; e < kPerThread; ++e) {
    const int i = (threadIdx.x + e * kGemmThreads) / kTileN, j = (threadIdx.x + e * kGemmThreads) % kTileN;
    gemm_tiles::write_c(g, m0 + i, n0 + j, acc[e]);
  }
}
#else

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
constexpr int kWarpRows = 32, kWarpCols = 64;  // 4 × 2 warps
using Scratch = float[16][16 + 4];             // one fragment on its way to C

template <typename TA, typename TB>
__device__ void multiply_block(const Operands<TA, TB>& g, int64_t m0, int64_t n0, Tiles& tiles) {
  __shared__ __align__(32) Scratch scratch[kGemmThreads / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp / 2) * kWarpRows, wn = (warp % 2) * kWarpCols;
  FragC acc[2][4];
#pragma unroll
  for (auto& row : acc)
    for (auto& c : row) wmma::fill_fragment(c, 0.0f);
  for (int64_t k0 = 0; k0 < g.K; k0 += kTileK) {
    stage(g, m0, n0, k0, tiles);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += 16) {
      FragA a[2];
      FragB b[4];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], &tiles.a[wm + 16 * i][kk], kTileK + kPad);
#pragma unroll
      for (int j = 0; j < 4; ++j) wmma::load_matrix_sync(b[j], &tiles.b[wn + 16 * j][kk], kTileK + kPad);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      wmma::store_matrix_sync(&scratch[warp][0][0], acc[i][j], 16 + 4, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32)
        gemm_tiles::write_c(g, m0 + wm + 16 * i + e / 16, n0 + wn + 16 * j + e % 16, scratch[warp][e / 16][e % 16]);
      __syncwarp();
    }
}
#endif

template <typename TA, typename TB>
__global__ void __launch_bounds__(kGemmThreads, 2) gemm_kernel(Operands<TA, TB> g) {
  __shared__ Tiles tiles;
  multiply_block(g, static_cast<int64_t>(blockIdx.y) * kTileM, static_cast<int64_t>(blockIdx.x) * kTileN, tiles);
}

}  // namespace

template <typename TA, typename TB>
void tile_gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const TA* A, int64_t lda,
                    const TB* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  const dim3 grid = gemm_tiles::grid_for(M, N, kTileM, kTileN, "tile_gemm_bf16");
  gemm_kernel<TA, TB><<<grid, kGemmThreads>>>({trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc});
  check(cudaGetLastError(), "tile_gemm_bf16 launch");
}

#define GRPO_TILE_GEMM_BF16(TA, TB)                                                                               \
  template void tile_gemm_bf16<TA, TB>(bool, bool, int64_t, int64_t, int64_t, float, const TA*, int64_t, const TB*, \
                                       int64_t, float, float*, int64_t);
GRPO_TILE_GEMM_BF16(bf16, bf16)
GRPO_TILE_GEMM_BF16(float, bf16)
GRPO_TILE_GEMM_BF16(bf16, float)
GRPO_TILE_GEMM_BF16(float, float)
#undef GRPO_TILE_GEMM_BF16

}  // namespace grpo::cuda
