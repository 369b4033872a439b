// The built-in model's part of grpo_cuda_parity (parity_main.cc): model_parity.cc.
#pragma once

namespace grpo::cuda {

// CUDA vs CPU model on the same weights (Llama / Qwen2 / Qwen3 shapes, untied and tied): score, logits,
// every gradient, AdamW, greedy and sampled generation. Failures count in grpo::test::failures().
void model_parities();

// Training and generation tokens/s of the GPU model at the Qwen2.5-0.5B shape.
void model_timings();

}  // namespace grpo::cuda
