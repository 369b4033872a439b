#include "linear.cuh"

#include "kernels.cuh"

namespace grpo::cuda::model {

void linear_forward(const float* x, const float* W, const float* b, int64_t T, int64_t in, int64_t out, float* y,
                    GemmPrecision precision) {
  if (T == 0) return;
  tile_gemm(false, true, T, out, in, 1.0f, x, in, W, in, 0.0f, y, out, precision);
  if (b) add_bias(y, b, T, out);
}

void linear_backward(const float* x, const float* W, const float* dy, int64_t T, int64_t in, int64_t out, float* dx,
                     float* dW, float* db, DeviceArray<float>& scratch, GemmPrecision precision) {
  if (T == 0) return;
  if (dx) tile_gemm(false, false, T, in, out, 1.0f, dy, out, W, in, 1.0f, dx, in, precision);
  tile_gemm(true, false, out, in, T, 1.0f, dy, out, x, in, 1.0f, dW, in, precision);
  if (db) column_sums(dy, T, out, db, scratch);
}

}  // namespace grpo::cuda::model
