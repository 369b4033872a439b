#!/usr/bin/env bash
# One prepared run on a machine with an NVIDIA GPU; prints every figure and keeps going past a failure.
#   1. without Node: grpo_cuda_host_check (the sampler's bit-exact pieces on the host), grpo_cuda_parity (every CUDA
#      kernel family and the built-in model against the CPU in one C++ program, then GPU timings against the H200's
#      roofs), and the parity run again under compute-sanitizer memcheck and racecheck;
#   2. with Node: the CUDA vitest suites (kernels, loss, bf16, model, trainer end to end) and the GPU benchmarks.
# Binaries come from .gpu-carry/ when scripts/gpu-prepare.sh made it on the development machine (no device time
# spent compiling; carry ".gpu-carry" and "dist"), else they are built here for this GPU's architecture only.
# Usage: scripts/gpu-check.sh [output dir]   (the log is also written there when given, e.g. "$OUT")
# GPU_CHECK_SANITIZE=0 skips compute-sanitizer. Exit status: 0, the first failure's, or 77 without a usable device.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-}"
jobs=$(nproc)
carry=.gpu-carry
failed=0
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
# Runs a check; a failure is reported and remembered, and the run goes on.
try() {
  "$@"
  local status=$?
  if ((status != 0)); then
    echo "FAILED ($status): $*"
    ((failed == 0)) && failed=$status
  fi
  return 0
}

gpu_arch() {
  nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. '
}

# Sets bin (parity, host check) and the addon paths, from the carry or a build for this GPU.
native_binaries() {
  if [[ -x $carry/bin/grpo_cuda_parity ]]; then
    bin=$carry/bin
    echo "prebuilt by scripts/gpu-prepare.sh: $(cat $carry/bin/BUILT 2>/dev/null)"
    return 0
  fi
  local arch
  arch="$(gpu_arch)"
  step "build for sm_${arch:-90} (grpo_cuda_parity, grpo_cuda_host_check)"
  local start=$SECONDS
  cmake -S . -B build-gpu -G Ninja -DGRPO_WITH_CUDA=ON -DGRPO_BUILD_TESTS=OFF \
    -DGRPO_CUDA_ARCHITECTURES="${arch:-90}-real" >build-gpu.log 2>&1 &&
    cmake --build build-gpu --target grpo_cuda_parity grpo_cuda_host_check -j "$jobs" >>build-gpu.log 2>&1 ||
    { tail -40 build-gpu.log; return 1; }
  echo "built in $((SECONDS - start)) s"
  bin=build-gpu/native/cuda/tests
}

node_side() {
  if ! command -v node >/dev/null && [[ -f $carry/node.tar.xz ]]; then
    mkdir -p /tmp/gpu-node && tar -xJf $carry/node.tar.xz -C /tmp/gpu-node && export PATH="/tmp/gpu-node:$PATH"
  fi
  if [[ ! -d node_modules/vitest && -f $carry/node_modules.tar.zst ]]; then
    tar --zstd -xf $carry/node_modules.tar.zst
  fi
  if ! command -v node >/dev/null || [[ ! -d node_modules/vitest ]]; then
    step "2. skipped: no node or no node_modules (make them with scripts/gpu-prepare.sh)"
    return 0
  fi
  if [[ -f $carry/bin/grpo_native_cuda.node ]]; then
    export GRPO_NATIVE_ADDON="$PWD/$carry/bin/grpo_native.node" GRPO_NATIVE_CUDA_ADDON="$PWD/$carry/bin/grpo_native_cuda.node"
  else
    step "2. build both addons for sm_$(gpu_arch)"
    npx cmake-js build --out build-cuda --CDGRPO_WITH_CUDA=ON --CDGRPO_BUILD_TESTS=OFF \
      --CDGRPO_CUDA_ARCHITECTURES="$(gpu_arch)-real" --parallel "$jobs" >build-cuda.log 2>&1 || { tail -40 build-cuda.log; return 1; }
    npx tsc -p tsconfig.json
    export GRPO_NATIVE_ADDON="$PWD/build-cuda/Release/grpo_native.node" GRPO_NATIVE_CUDA_ADDON="$PWD/build-cuda/cuda/grpo_native_cuda.node"
  fi
  step "2. vitest: every CUDA suite (kernels, loss, bf16, model, trainer) and the CPU suites of the shared glue"
  try npx vitest run test/cuda-*.test.ts test/logprob*.test.ts test/advantage*.test.ts test/sampling.test.ts \
    test/loss-*.test.ts test/policy-device.test.ts
  step "2. GPU benchmarks"
  try timeout 300 node bench/cuda.bench.js
  try timeout 300 node bench/cuda-model.bench.js
}

run_checks() {
  step "machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_cap --format=csv || echo "nvidia-smi unavailable"
  echo "$(cmake --version | head -1); $(nvcc --version 2>/dev/null | tail -1); $jobs cores"
  native_binaries || return 1
  step "1. grpo_cuda_host_check (the sampler's bit-exact pieces, on the host)"
  try "$bin/grpo_cuda_host_check"
  step "1. grpo_cuda_parity: parity, then timings"
  "$bin/grpo_cuda_parity"
  local status=$?
  ((status == 77)) && { echo "no usable GPU: nothing else to check"; return 77; }
  ((status != 0)) && { echo "FAILED ($status): grpo_cuda_parity"; ((failed == 0)) && failed=$status; }
  if [[ ${GPU_CHECK_SANITIZE:-1} != 0 ]] && command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
      step "1. compute-sanitizer --tool $tool grpo_cuda_parity --parity-only (at most 180 s)"
      try timeout 180 compute-sanitizer --tool "$tool" --error-exitcode 3 --print-limit 20 "$bin/grpo_cuda_parity" --parity-only
    done
  fi
  node_side
  step "done: $([[ $failed == 0 ]] && echo 'all checks passed' || echo "first failure status $failed")"
  return "$failed"
}

if [[ -n "$out" ]]; then
  run_checks 2>&1 | tee "$out/gpu-check.log"
else
  run_checks
fi
