#include "linear.h"

#include "gemm/gemm.h"
#include "gemm/gemm_bf16.h"
#include "runtime/thread_pool.h"

namespace grpo::model {

namespace {

// One widened matrix at a time per thread: a product widens its weight, multiplies, and is done with it.
thread_local std::vector<float> widen_scratch;

}  // namespace

const float* widened(const Weight& w, int64_t n, std::vector<float>& scratch) {
  if (!w.bits16) return w.f32;
  scratch.resize(static_cast<size_t>(n));
  parallel_for(n, 65536, [&](int64_t begin, int64_t end) { widen16(w.dtype16, w.bits16 + begin, end - begin, scratch.data() + begin); });
  return scratch.data();
}

Weight dense_weight(const LayerTensors& w, LoraModule m) {
  const float* f32[kLoraModules] = {w.wq, w.wk, w.wv, w.wo, w.w_gate, w.w_up, w.w_down};
  return {f32[m], w.dense16[m], w.dtype16};
}

void linear_forward(const float* x, Weight weight, const float* b, int64_t T, int64_t in, int64_t out, float* y, bool bf16,
                    const PackedB* packed, LoraSite lora) {
  if (packed) gemm_packed(T, x, in, *packed, y, out);
  else (bf16 ? gemm_bf16 : gemm)(false, true, T, out, in, 1.0f, x, in, widened(weight, out * in, widen_scratch), in, 0.0f, y, out);
  if (b) {
    parallel_for(T, 64, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t)
        for (int64_t o = 0; o < out; ++o) y[t * out + o] += b[o];
    });
  }
  if (lora.adapter) adapter_forward(*lora.adapter, x, T, in, out, lora.u, y);
}

void linear_backward(const float* x, Weight weight, const float* dy, int64_t T, int64_t in, int64_t out, float* dx,
                     float* dW, float* db, bool bf16, LoraSite lora) {
  if (T == 0) return;
  const auto product = bf16 ? gemm_bf16 : gemm;
  if (dx) product(false, false, T, in, out, 1.0f, dy, out, widened(weight, out * in, widen_scratch), in, 1.0f, dx, in);
  if (dW) product(true, false, out, in, T, 1.0f, dy, out, x, in, 1.0f, dW, in);
  if (db) {
    parallel_for(out, 256, [&](int64_t begin, int64_t end) {
      for (int64_t t = 0; t < T; ++t)
        for (int64_t o = begin; o < end; ++o) db[o] += dy[t * out + o];
    });
  }
  if (lora.adapter) adapter_backward(*lora.adapter, x, lora.u, dy, T, in, out, dx);
}

}  // namespace grpo::model
