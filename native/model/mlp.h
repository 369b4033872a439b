// SwiGLU MLP: out = down( silu(gate(x)) ⊙ up(x) ).
#pragma once

#include <cstdint>

#include "linear.h"
#include "lora.h"

namespace grpo {
struct PackedB;
}

namespace grpo::model {

struct MlpWeights {
  Weight gate, up, down;  // [I, H], [I, H], [H, I]
  bool bf16;
  const PackedB *gate_packed = nullptr, *up_packed = nullptr, *down_packed = nullptr;  // forward only (generation)
  LoraSite gate_lora{}, up_lora{}, down_lora{};  // adapters, when the layer has them
};

struct MlpGrads {
  float *gate, *up, *down;  // null: frozen
};

// gate, up, act [T, I] are kept for backward; out [T, H]
void mlp_forward(const MlpWeights& w, const float* x, int64_t T, int64_t H, int64_t I, float* gate, float* up, float* act,
                 float* out);

// dx [T, H] += ...; grads accumulate. scratch [T, I] (overwritten).
void mlp_backward(const MlpWeights& w, const float* x, const float* gate, const float* up, const float* act,
                  const float* dout, int64_t T, int64_t H, int64_t I, float* dx, const MlpGrads& g, float* scratch_g,
                  float* scratch_u);

}  // namespace grpo::model
