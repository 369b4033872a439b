#!/usr/bin/env bash
# Prepares a GPU check on the development machine, so that the GPU's time goes to checks, not to compiling:
# builds grpo_cuda_parity, grpo_cuda_host_check and both addons for one architecture (default sm_90, the H200),
# compiles the TypeScript, and packs Node and the node_modules that the tests need, into .gpu-carry/ (git-ignored).
# Then run on the GPU machine, carrying ".gpu-carry" and "dist":  bash scripts/gpu-check.sh "$OUT"
# Usage: scripts/gpu-prepare.sh [architecture, e.g. 90]
set -euo pipefail
cd "$(dirname "$0")/.."
arch="${1:-90}"
carry=.gpu-carry
export PATH="$PATH:/usr/local/cuda/bin"

rm -rf "$carry" && mkdir -p "$carry/bin"
cmake -S . -B build-gpu-prep -G Ninja -DGRPO_WITH_CUDA=ON -DGRPO_BUILD_TESTS=OFF -DGRPO_CUDA_ARCHITECTURES="$arch-real" >/dev/null
cmake --build build-gpu-prep --target grpo_cuda_parity grpo_cuda_host_check -j 2
npx cmake-js build --out build-gpu-prep-addon --CDGRPO_WITH_CUDA=ON --CDGRPO_BUILD_TESTS=OFF \
  --CDGRPO_CUDA_ARCHITECTURES="$arch-real" --parallel 2 >/dev/null
cp build-gpu-prep/native/cuda/tests/{grpo_cuda_parity,grpo_cuda_host_check} build-gpu-prep-addon/Release/grpo_native.node \
  build-gpu-prep-addon/cuda/grpo_native_cuda.node "$carry/bin/"
echo "sm_$arch at $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes'), $(date -u +%FT%TZ)" >"$carry/bin/BUILT"
npx tsc -p tsconfig.json

# Node itself and what the tests import (not the compilers: typescript, node-gyp, cmake-js, prebuildify).
tar -cJf "$carry/node.tar.xz" -C "$(dirname "$(readlink -f "$(command -v node)")")" node
tar --zstd -cf "$carry/node_modules.tar.zst" --exclude=node_modules/typescript --exclude=node_modules/@types \
  --exclude=node_modules/node-gyp --exclude=node_modules/prebuildify --exclude=node_modules/cmake-js node_modules
du -sh "$carry" dist
echo "carry: [\"$carry\", \"dist\"] (the working tree and the carry must stay under 64 MiB together)"
