// Blocked GEMM driver. For each chunk of rows (M) and of the sum (K), the rows of op(A) are
// packed once into micro-panels [kc, mr]; for each chunk of columns (N) the columns of op(B)
// are packed into micro-panels [kc, nr]; then tasks (blocks of C) run the register-tile
// micro-kernel of the CPU's path (gemm_avx512.cc, gemm_avx2.cc, or the plain one below; for
// gemm_bf16, gemm_amx.cc or gemm_avx512_bf16.cc).
// Only the K chunking shapes the summation, and it depends on K alone: every C element sums
// k-chunk after k-chunk in order, so the result is the same for any thread count or tiling.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "gemm.h"
#include "gemm_bf16.h"
#include "gemm_kernels.h"
#include "grpo/grpo.h"
#include "runtime/amx.h"
#include "runtime/thread_pool.h"

namespace grpo {

namespace gemm_detail {

namespace {

constexpr int64_t kMaxKC = 512;          // longest k-chunk (a micro-panel of A, 14 × 512 floats, fits L1)
constexpr int64_t kChunkRows = 2048;     // packed A chunk, shared by all tasks: ≤ 2048 × 512 floats = 4 MB
constexpr int64_t kChunkCols = 2048;     // packed B chunk, shared by all tasks: ≤ 4 MB
constexpr int64_t kTaskCols = 256;       // a task's slice of packed B (512 KB) stays in its core's L2
constexpr int64_t kMinTasks = 16;        // split rows too when a chunk has fewer column tasks (claimed dynamically: 8 left
                                         // one of 2 threads idle for up to 1/9 of the 6144 × 768 × 256 product)
constexpr int64_t kPanelsPerPackJob = 4;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// op(X)[i, k] of a row-major stored X (X is [I, K], or [K, I] when transposed).
struct Operand {
  const float* data;
  int64_t ld;
  bool trans;
};

// A 64-byte aligned scratch buffer that keeps its memory between calls (one per thread).
class Buffer {
 public:
  ~Buffer() { std::free(data_); }
  float* get(int64_t floats) {
    const size_t bytes = (static_cast<size_t>(floats) * sizeof(float) + 63) / 64 * 64;
    if (bytes > capacity_) {
      std::free(data_);
      data_ = static_cast<float*>(std::aligned_alloc(64, bytes));
      if (!data_) throw std::bad_alloc();
      capacity_ = bytes;
    }
    return data_;
  }

 private:
  float* data_ = nullptr;
  size_t capacity_ = 0;
};

// kc rounded up to the kernel's k_block: the k a panel holds, the padding zero.
int64_t padded_k(const TileKernel& kn, int64_t kc) { return ceil_div(kc, kn.k_block) * kn.k_block; }

// Floats one packed panel of `width` rows or columns takes (bf16 panels hold two k per float).
int64_t panel_floats(const TileKernel& kn, int64_t kc, int width) {
  return (kn.to_pairs ? padded_k(kn, kc) / 2 : kc) * width;
}

// panel [kc, kWidth] = kc runs of kWidth floats, ld apart. The copy's size is a constant, which the compiler inlines:
// a libc memcpy call per run cost more than the copy (8% of a fused LM-head backward, docs/performance.md).
template <int kWidth> void copy_runs(const float* src, int64_t ld, int64_t kc, float* panel) {
  for (int64_t k = 0; k < kc; ++k) std::memcpy(panel + k * kWidth, src + k * ld, kWidth * sizeof(float));
}

// panel [kc, width] = kc runs of `count` floats, ld apart, zero past `count`.
void copy_runs(const float* src, int64_t ld, int64_t count, int64_t kc, int width, float* panel) {
  if (count == width) {
    switch (width) {  // the kernels' mr and nr (gemm_kernels.h)
      case 6: return copy_runs<6>(src, ld, kc, panel);
      case 14: return copy_runs<14>(src, ld, kc, panel);
      case 16: return copy_runs<16>(src, ld, kc, panel);
      case 32: return copy_runs<32>(src, ld, kc, panel);
      default: break;
    }
  }
  if (count < width) std::fill(panel, panel + kc * width, 0.0f);
  for (int64_t k = 0; k < kc; ++k) std::memcpy(panel + k * width, src + k * ld, count * sizeof(float));
}

// panel [kc, width] = op(X)[i0 .. i0+count, k0 .. k0+kc] transposed, zero past `count`.
void pack_floats(const TileKernel& kn, const Operand& x, int64_t i0, int64_t count, int64_t k0, int64_t kc, int width,
                 float* panel) {
  if (!x.trans) return kn.pack_transposed(x.data + i0 * x.ld + k0, x.ld, static_cast<int>(count), kc, width, panel);
  copy_runs(x.data + k0 * x.ld + i0, x.ld, count, kc, width, panel);  // rows of the stored X run along i
}

// The kernel's panel: its own packer (`direct`) where it has one, else floats, or bf16 k-pairs through a float
// panel with zero rows up to k_block.
void pack_panel(const TileKernel& kn, PackFn direct, const Operand& x, int64_t i0, int64_t count, int64_t k0,
                int64_t kc, int width, float* panel) {
  if (direct) {
    const float* src = x.trans ? x.data + k0 * x.ld + i0 : x.data + i0 * x.ld + k0;
    return direct(src, x.ld, !x.trans, static_cast<int>(count), kc, panel);
  }
  if (!kn.to_pairs) return pack_floats(kn, x, i0, count, k0, kc, width, panel);
  thread_local Buffer scratch_buffer;
  const int64_t padded = padded_k(kn, kc);
  float* scratch = scratch_buffer.get(padded * width);  // [padded, width]
  pack_floats(kn, x, i0, count, k0, kc, width, scratch);
  std::fill(scratch + kc * width, scratch + padded * width, 0.0f);
  kn.to_pairs(scratch, padded, width, panel);
}

void generic_tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int, int) {
  constexpr int kMR = 6, kNR = 16;
  float acc[kMR][kNR] = {};
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += kNR)
    for (int r = 0; r < kMR; ++r)
      for (int j = 0; j < kNR; ++j) acc[r][j] += a[r] * b[j];
  for (int r = 0; r < kMR; ++r)
    for (int j = 0; j < kNR; ++j) c[r * ldc + j] = alpha * acc[r][j] + (beta == 0.0f ? 0.0f : beta * c[r * ldc + j]);
}

// One k-chunk of the sum over one chunk of C, with its packed panels.
struct Chunk {
  const TileKernel& kernel;
  int64_t m0, mc, n0, nc, kc;
  const float *a_pack, *b_pack;  // [mc / mr panels][kc][mr], [nc / nr panels][kc][nr]
  float alpha, beta;             // beta is 1 after the first k-chunk
  float* C;
  int64_t ldc;
};

void run_tile(const Chunk& ch, int64_t a_panel, int64_t b_panel) {
  const TileKernel& kn = ch.kernel;
  const int rows = static_cast<int>(std::min<int64_t>(kn.mr, ch.mc - a_panel * kn.mr));
  const int cols = static_cast<int>(std::min<int64_t>(kn.nr, ch.nc - b_panel * kn.nr));
  const float* a = ch.a_pack + a_panel * panel_floats(kn, ch.kc, kn.mr);
  const float* b = ch.b_pack + b_panel * panel_floats(kn, ch.kc, kn.nr);
  float* c = ch.C + (ch.m0 + a_panel * kn.mr) * ch.ldc + ch.n0 + b_panel * kn.nr;
  if (kn.edges || (rows == kn.mr && cols == kn.nr)) return kn.run(ch.kc, a, b, c, ch.ldc, ch.alpha, ch.beta, rows, cols);
  alignas(64) float scratch[14 * 32];  // holds the tile of any kernel without edges (6 × 16 today)
  kn.run(ch.kc, a, b, scratch, kn.nr, 1.0f, 0.0f, kn.mr, kn.nr);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j) {
      float& out = c[r * ch.ldc + j];
      out = ch.alpha * scratch[r * kn.nr + j] + (ch.beta == 0.0f ? 0.0f : ch.beta * out);
    }
}

// The kernel's per-thread state (AMX: the tile configuration) while one thread runs a block of tasks.
class KernelScope {
 public:
  explicit KernelScope(const TileKernel& kn) : leave_(kn.leave) {
    if (kn.enter) kn.enter();
  }
  ~KernelScope() {
    if (leave_) leave_();
  }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

 private:
  void (*leave_)();
};

// Tasks are blocks of C: [row part] × [kTaskCols columns]; each A micro-panel is reused from
// L1 across the task's B micro-panels, which stream from L2.
void compute_chunk(const Chunk& ch) {
  const int64_t a_panels = ceil_div(ch.mc, ch.kernel.mr), b_panels = ceil_div(ch.nc, ch.kernel.nr);
  const int64_t b_per_task = kTaskCols / ch.kernel.nr, col_tasks = ceil_div(b_panels, b_per_task);
  const int64_t row_parts = std::min(a_panels, ceil_div(kMinTasks, col_tasks));
  const int64_t a_per_task = ceil_div(a_panels, row_parts);
  parallel_for(row_parts * col_tasks, 1, [&](int64_t begin, int64_t end) {
    const KernelScope scope(ch.kernel);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t a_first = task / col_tasks * a_per_task, b_first = task % col_tasks * b_per_task;
      const int64_t a_last = std::min(a_panels, a_first + a_per_task), b_last = std::min(b_panels, b_first + b_per_task);
      for (int64_t ap = a_first; ap < a_last; ++ap)
        for (int64_t bp = b_first; bp < b_last; ++bp) run_tile(ch, ap, bp);
    }
  });
}

// Packs the B panels of columns [n0, n0 + nc) and, when `with_a`, the A panels of rows [m0, m0 + mc).
void pack_chunk(const TileKernel& kn, const Operand& a, const Operand& b, bool with_a, int64_t m0, int64_t mc,
                int64_t n0, int64_t nc, int64_t k0, int64_t kc, float* a_pack, float* b_pack) {
  const int64_t a_panels = with_a ? ceil_div(mc, kn.mr) : 0, b_panels = ceil_div(nc, kn.nr);
  parallel_for(a_panels + b_panels, kPanelsPerPackJob, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      if (p < a_panels) {
        pack_panel(kn, kn.pack_a, a, m0 + p * kn.mr, std::min<int64_t>(kn.mr, mc - p * kn.mr), k0, kc, kn.mr,
                   a_pack + p * panel_floats(kn, kc, kn.mr));
      } else {
        const int64_t q = p - a_panels;
        pack_panel(kn, kn.pack_b, b, n0 + q * kn.nr, std::min<int64_t>(kn.nr, nc - q * kn.nr), k0, kc, kn.nr,
                   b_pack + q * panel_floats(kn, kc, kn.nr));
      }
    }
  });
}

void scale_c(int64_t M, int64_t N, float beta, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
}

}  // namespace

void pack_transposed_generic(const float* src, int64_t ld, int count, int64_t kc, int width, float* panel) {
  if (count < width) std::fill(panel, panel + kc * width, 0.0f);
  for (int i = 0; i < count; ++i)
    for (int64_t k = 0; k < kc; ++k) panel[k * width + i] = src[i * ld + k];
}

TileKernel generic_kernel() { return {"generic", 6, 16, false, &generic_tile, &pack_transposed_generic, nullptr}; }

#if !(defined(__x86_64__) && defined(__GNUC__))  // no x86 SIMD units: grpo_cpu_path() is "generic"
TileKernel avx512_kernel() { return generic_kernel(); }
TileKernel avx2_kernel() { return generic_kernel(); }
TileKernel avx512_bf16_kernel() { return generic_kernel(); }
TileKernel amx_bf16_kernel() { return generic_kernel(); }
#endif

const TileKernel* best_bf16_kernel() {
  static const TileKernel amx = amx_bf16_kernel(), avx512 = avx512_bf16_kernel();
  static const TileKernel* const kernel = []() -> const TileKernel* {
#if defined(__x86_64__) && defined(__GNUC__)
    // AMX needs the AVX512_BF16 kernel's instructions too (its packers and epilogue).
    if (std::strcmp(grpo_cpu_path(), "avx512") != 0 || !__builtin_cpu_supports("avx512bf16")) return nullptr;
    return amx_bf16_usable() ? &amx : &avx512;
#else
    return nullptr;
#endif
  }();
  return kernel;
}

const TileKernel& best_kernel() {
  static const TileKernel kernel = [] {
    const char* path = grpo_cpu_path();
    if (std::strcmp(path, "avx512") == 0) return avx512_kernel();
    if (std::strcmp(path, "avx2") == 0) return avx2_kernel();
    return generic_kernel();
  }();
  return kernel;
}

void gemm_with(const TileKernel& kn, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
               const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) return scale_c(M, N, beta, C, ldc);
  // op(A) rows are A's rows unless transposed; op(B)ᵀ rows (the columns of C) likewise.
  const Operand a{A, lda, trans_a}, b{B, ldb, !trans_b};
  const int64_t k_step = ceil_div(K, ceil_div(K, kMaxKC));  // equal k-chunks, from K alone
  thread_local Buffer a_buffer, b_buffer;
  float* a_pack = a_buffer.get(ceil_div(std::min(M, kChunkRows), kn.mr) * panel_floats(kn, k_step, kn.mr));
  float* b_pack = b_buffer.get(ceil_div(std::min(N, kChunkCols), kn.nr) * panel_floats(kn, k_step, kn.nr));
  for (int64_t m0 = 0; m0 < M; m0 += kChunkRows) {
    const int64_t mc = std::min(kChunkRows, M - m0);
    for (int64_t k0 = 0; k0 < K; k0 += k_step) {
      const int64_t kc = std::min(k_step, K - k0);
      for (int64_t n0 = 0; n0 < N; n0 += kChunkCols) {
        const int64_t nc = std::min(kChunkCols, N - n0);
        pack_chunk(kn, a, b, n0 == 0, m0, mc, n0, nc, k0, kc, a_pack, b_pack);
        compute_chunk({kn, m0, mc, n0, nc, kc, a_pack, b_pack, alpha, k0 == 0 ? beta : 1.0f, C, ldc});
      }
    }
  }
}

// Where the panels of (k-chunk, n-chunk) go in a PackedB, in the order gemm_with visits them.
std::vector<int64_t> packed_offsets(const TileKernel& kn, int64_t N, int64_t K, int64_t k_step) {
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (int64_t k0 = 0; k0 < K; k0 += k_step)
    for (int64_t n0 = 0; n0 < N; n0 += kChunkCols) {
      offsets.push_back(total);
      total += ceil_div(std::min(kChunkCols, N - n0), kn.nr) * panel_floats(kn, std::min(k_step, K - k0), kn.nr);
    }
  offsets.push_back(total);
  return offsets;
}

}  // namespace gemm_detail

PackedB pack_b(bool trans_b, int64_t N, int64_t K, const float* B, int64_t ldb) {
  PackedB p;
  repack_b(trans_b, N, K, B, ldb, p);
  return p;
}

void repack_b(bool trans_b, int64_t N, int64_t K, const float* B, int64_t ldb, PackedB& p) {
  using namespace gemm_detail;
  const TileKernel& kn = best_kernel();
  p.N = N, p.K = K, p.k_step = K > 0 ? ceil_div(K, ceil_div(K, kMaxKC)) : 1;
  p.offsets = packed_offsets(kn, N, K, p.k_step);
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(p.offsets.back(), 16)) * sizeof(float) + 63) / 64 * 64;
  if (bytes > p.capacity) {
    p.panels = {static_cast<float*>(std::aligned_alloc(64, bytes)), std::free};
    if (!p.panels) throw std::bad_alloc();
    p.capacity = bytes;
  }
  const Operand b{B, ldb, !trans_b};
  size_t chunk = 0;
  for (int64_t k0 = 0; k0 < K; k0 += p.k_step)
    for (int64_t n0 = 0; n0 < N; n0 += kChunkCols, ++chunk)
      pack_chunk(kn, b, b, false, 0, 0, n0, std::min(kChunkCols, N - n0), k0, std::min(p.k_step, K - k0), nullptr,
                 p.panels.get() + p.offsets[chunk]);
}

void gemm_packed(int64_t M, const float* A, int64_t lda, const PackedB& p, float* C, int64_t ldc) {
  gemm_packed(false, M, A, lda, p, 0.0f, C, ldc);
}

void gemm_packed(bool trans_a, int64_t M, const float* A, int64_t lda, const PackedB& p, float beta, float* C, int64_t ldc) {
  using namespace gemm_detail;
  const TileKernel& kn = best_kernel();
  if (M <= 0 || p.N <= 0) return;
  if (p.K <= 0) return scale_c(M, p.N, beta, C, ldc);
  const Operand a{A, lda, trans_a};
  thread_local Buffer a_buffer;
  float* a_pack = a_buffer.get(ceil_div(std::min(M, kChunkRows), kn.mr) * kn.mr * p.k_step);
  for (int64_t m0 = 0; m0 < M; m0 += kChunkRows) {
    const int64_t mc = std::min(kChunkRows, M - m0);
    size_t chunk = 0;
    for (int64_t k0 = 0; k0 < p.K; k0 += p.k_step) {
      const int64_t kc = std::min(p.k_step, p.K - k0);
      for (int64_t n0 = 0; n0 < p.N; n0 += kChunkCols, ++chunk) {
        const int64_t nc = std::min(kChunkCols, p.N - n0);
        if (n0 == 0) pack_chunk(kn, a, a, true, m0, mc, 0, 0, k0, kc, a_pack, nullptr);
        compute_chunk({kn, m0, mc, n0, nc, kc, a_pack, p.panels.get() + p.offsets[chunk], 1.0f, k0 == 0 ? beta : 1.0f, C, ldc});
      }
    }
  }
}

void gemm_bf16(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
               const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  const gemm_detail::TileKernel* bf16 = gemm_detail::best_bf16_kernel();
  gemm_detail::gemm_with(bf16 ? *bf16 : gemm_detail::best_kernel(), trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta,
                         C, ldc);
}

bool gemm_bf16_native() { return gemm_detail::best_bf16_kernel() != nullptr; }

const char* gemm_bf16_kernel() {
  const gemm_detail::TileKernel* bf16 = gemm_detail::best_bf16_kernel();
  return bf16 ? bf16->name : gemm_detail::best_kernel().name;
}

void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  gemm_detail::gemm_with(gemm_detail::best_kernel(), trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace grpo
