#include "mlp.h"

#include <algorithm>

#include "linear.h"
#include "runtime/thread_pool.h"
#include "vec.h"

namespace grpo::model {

namespace {

// act = silu(gate) ⊙ up over [begin, end)
GRPO_CLONES void swiglu(const float* gate, const float* up, int64_t begin, int64_t end, float* act) {
  for (int64_t i = begin; i < end; ++i) act[i] = gate[i] * vec::sigmoid(gate[i]) * up[i];
}

// d_act (in d_gate) → d_up, d_gate over [begin, end)
GRPO_CLONES void swiglu_backward(const float* gate, const float* up, int64_t begin, int64_t end, float* d_gate, float* d_up) {
  for (int64_t i = begin; i < end; ++i) {
    const float s = vec::sigmoid(gate[i]), silu = gate[i] * s, da = d_gate[i];
    d_up[i] = da * silu;
    d_gate[i] = da * up[i] * (s + silu * (1.0f - s));
  }
}

}  // namespace

void mlp_forward(const MlpWeights& w, const float* x, int64_t T, int64_t H, int64_t I, float* gate, float* up, float* act,
                 float* out) {
  linear_forward(x, w.gate, nullptr, T, H, I, gate, w.bf16, w.gate_packed, w.gate_lora);
  linear_forward(x, w.up, nullptr, T, H, I, up, w.bf16, w.up_packed, w.up_lora);
  parallel_for(T * I, 4096, [&](int64_t begin, int64_t end) { swiglu(gate, up, begin, end, act); });
  linear_forward(act, w.down, nullptr, T, I, H, out, w.bf16, w.down_packed, w.down_lora);
}

void mlp_backward(const MlpWeights& w, const float* x, const float* gate, const float* up, const float* act,
                  const float* dout, int64_t T, int64_t H, int64_t I, float* dx, const MlpGrads& g, float* d_gate,
                  float* d_up) {
  // d_gate temporarily holds d(act) = dout · W_down
  std::fill(d_gate, d_gate + T * I, 0.0f);
  linear_backward(act, w.down, dout, T, I, H, d_gate, g.down, nullptr, w.bf16, w.down_lora);
  parallel_for(T * I, 4096, [&](int64_t begin, int64_t end) { swiglu_backward(gate, up, begin, end, d_gate, d_up); });
  linear_backward(x, w.gate, d_gate, T, H, I, dx, g.gate, nullptr, w.bf16, w.gate_lora);
  linear_backward(x, w.up, d_up, T, H, I, dx, g.up, nullptr, w.bf16, w.up_lora);
}

}  // namespace grpo::model
