#!/usr/bin/env bash
# One prepared run on a machine with an NVIDIA GPU, about 8 minutes on 16 cores; prints every figure.
#   1. without Node: build grpo_cuda_host_check and grpo_cuda_parity (CUDA vs CPU kernels in one C++ program) and
#      run them: bit-exact pieces on the host, parity checks on the GPU, then GPU timings against the H200's roofs;
#   2. with Node and this repo's node_modules (npm ci), if present: build both addons (npm run build:cuda), run
#      the CUDA parity, trainer and no-GPU-path vitest suites, and bench/cuda.bench.js.
# Usage: scripts/gpu-check.sh [output dir]   (the log is also written there when given, e.g. "$OUT")
# Needs cmake >= 3.19, ninja, nvcc (CUDA 13) and an NVIDIA driver (R580+). Exit status: the first failure's.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-}"
jobs=$(nproc)
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

run_checks() {
  step "machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || echo "nvidia-smi unavailable"
  echo "$(cmake --version | head -1); $(nvcc --version | tail -1); $jobs cores"

  step "1. grpo_cuda_parity (no Node): build"
  start=$SECONDS
  cmake -S . -B build-gpu -G Ninja -DGRPO_WITH_CUDA=ON -DGRPO_BUILD_TESTS=OFF >build-gpu.log 2>&1
  cmake --build build-gpu --target grpo_cuda_parity grpo_cuda_host_check -j "$jobs" >>build-gpu.log 2>&1 ||
    { tail -40 build-gpu.log; return 1; }
  echo "built in $((SECONDS - start)) s"
  step "1. grpo_cuda_host_check (the sampler's bit-exact pieces, on the host)"
  build-gpu/native/cuda/grpo_cuda_host_check
  step "1. grpo_cuda_parity: parity, then timings"
  build-gpu/native/cuda/grpo_cuda_parity

  if ! command -v node >/dev/null || [[ ! -d node_modules/cmake-js || ! -d node_modules/vitest ]]; then
    step "2. skipped: no node or no node_modules here (the Node-side checks need both)"
    return 0
  fi
  step "2. npm run build:cuda (CPU addon + CUDA addon into build-cuda)"
  start=$SECONDS
  npm run build:cuda -- --parallel "$jobs" >build-cuda.log 2>&1 || { tail -40 build-cuda.log; return 1; }
  echo "built in $((SECONDS - start)) s: $(stat -c %s build-cuda/cuda/grpo_native_cuda.node) bytes"
  npx tsc -p tsconfig.json
  export GRPO_NATIVE_ADDON="$PWD/build-cuda/Release/grpo_native.node"
  step "2. vitest: CUDA parity and the graceful path, then the CPU suites of the shared glue"
  npx vitest run test/cuda-parity.test.ts test/cuda-loader.test.ts test/cuda-trainer.test.ts
  npx vitest run test/logprob.test.ts test/advantage.test.ts test/sampling.test.ts
  npx vitest run test/cuda-model-parity.test.ts  # the built-in model: CUDA vs CPU (score, logits, gradients, AdamW, generation)
  npx vitest run test/cuda-loss-parity.test.ts  # policy loss + token advantages: CUDA vs CPU, and the no-GPU path
  npx vitest run test/cuda-bf16-parity.test.ts test/logprob-bf16.test.ts  # fused LM head with bf16 inputs: CUDA vs CPU
  npx vitest run test/loss-vectors.test.ts test/loss-gradients.test.ts test/loss-presets.test.ts test/advantage-tokens.test.ts
  step "2. bench/cuda.bench.js"
  timeout 300 node bench/cuda.bench.js
  timeout 300 node bench/cuda-model.bench.js  # the built-in model at the 0.5B shape: training and generation tokens/s
  step "done"
}

if [[ -n "$out" ]]; then
  run_checks 2>&1 | tee "$out/gpu-check.log"
else
  run_checks
fi
