// Dense layer y = x·Wᵀ (+ b) with W [out, in] as stored by Hugging Face, and its backward; with a LoRA site, plus
// its adapter (lora.h). bf16: products of bfloat16-rounded inputs with float32 sums (gemm_bf16), else float32 gemm
// (the adapter's small products are always float32).
#pragma once

#include <cstdint>

#include "lora.h"

namespace grpo {
struct PackedB;
}

namespace grpo::model {

// y [T, out] = x [T, in] · Wᵀ + b (b may be null); with `packed` (W packed by pack_b), the same bits without packing W.
void linear_forward(const float* x, const float* W, const float* b, int64_t T, int64_t in, int64_t out, float* y,
                    bool bf16, const PackedB* packed = nullptr, LoraSite lora = {});

// dx [T, in] += dy · W (skipped when dx is null);  dW [out, in] += dyᵀ · x (when dW is set: a frozen W has none);
// db [out] += Σ_t dy (when db is set); the adapter's gradients when the site has one.
void linear_backward(const float* x, const float* W, const float* dy, int64_t T, int64_t in, int64_t out, float* dx,
                     float* dW, float* db, bool bf16, LoraSite lora = {});

}  // namespace grpo::model
