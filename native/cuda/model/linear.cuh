// Dense layer y = x·Wᵀ (+ b) with W [out, in] (Hugging Face layout) and its backward on the tensor-core GEMM
// (tile_gemm.cuh): 3xTF32 (about float32), or bf16-rounded inputs with float32 sums for the model's bf16
// matmuls: native/model/linear.cc on device pointers.
#pragma once

#include <cstdint>

#include "device_array.cuh"
#include "tile_gemm.cuh"

namespace grpo::cuda::model {

// y [T, out] = x [T, in] · Wᵀ + b (b may be NULL)
void linear_forward(const float* x, const float* W, const float* b, int64_t T, int64_t in, int64_t out, float* y,
                    GemmPrecision precision = GemmPrecision::kFloat32);

// dx [T, in] += dy · W (skipped when dx is NULL);  dW [out, in] += dyᵀ · x;  db [out] += Σ_t dy (when db is set)
void linear_backward(const float* x, const float* W, const float* dy, int64_t T, int64_t in, int64_t out, float* dx,
                     float* dW, float* db, DeviceArray<float>& scratch, GemmPrecision precision = GemmPrecision::kFloat32);

}  // namespace grpo::cuda::model
