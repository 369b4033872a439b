// Dense layer y = x·Wᵀ (+ b) with W [out, in] as stored by Hugging Face, and its backward; with a LoRA site, plus
// its adapter (lora.h). bf16: products of bfloat16-rounded inputs with float32 sums (gemm_bf16), else float32 gemm
// (the adapter's small products are always float32).
#pragma once

#include <cstdint>
#include <vector>

#include "lora.h"
#include "params.h"

namespace grpo {
struct PackedB;
}

namespace grpo::model {

// A dense weight as a product reads it: float32, or the bfloat16 or float16 bits of a frozen base kept in 16 bits,
// widened (exactly) to float32 where it is used. Implicit from a float pointer: float32 call sites read as before.
struct Weight {
  const float* f32 = nullptr;
  const uint16_t* bits16 = nullptr;
  Dtype16 dtype16 = Dtype16::bf16;
  Weight(const float* w) : f32(w) {}  // NOLINT(google-explicit-constructor): float32 weights pass as they are
  Weight(const float* w, const uint16_t* bits, Dtype16 dtype) : f32(w), bits16(bits), dtype16(dtype) {}
};

// The weight's n floats: f32 itself, or bits16 widened into `scratch`.
const float* widened(const Weight& w, int64_t n, std::vector<float>& scratch);

// Module m's weight in a layer: float32, or kept in 16 bits.
Weight dense_weight(const LayerTensors& w, LoraModule m);

// y [T, out] = x [T, in] · Wᵀ + b (b may be null); with `packed` (W packed by pack_b), the same bits without packing W.
void linear_forward(const float* x, Weight W, const float* b, int64_t T, int64_t in, int64_t out, float* y,
                    bool bf16, const PackedB* packed = nullptr, LoraSite lora = {});

// dx [T, in] += dy · W (skipped when dx is null);  dW [out, in] += dyᵀ · x (when dW is set: a frozen W has none);
// db [out] += Σ_t dy (when db is set); the adapter's gradients when the site has one.
void linear_backward(const float* x, Weight W, const float* dy, int64_t T, int64_t in, int64_t out, float* dx,
                     float* dW, float* db, bool bf16, LoraSite lora = {});

}  // namespace grpo::model
