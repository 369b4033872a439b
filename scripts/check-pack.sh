#!/usr/bin/env bash
# Proves the published package works without a compiler: pack it (with the prebuilt binary),
# install the tarball into an empty project with install scripts disabled, and call a kernel.
# With the GPU package's tarball as argument (scripts/pack-cuda.js), it is installed beside it and must be the
# addon that loadCuda() finds (here without a GPU: loaded, then "no usable device").
# Usage: scripts/check-pack.sh [grpo-native-linux-x64-cuda13-<version>.tgz]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
test -f prebuilds/linux-x64/grpo-native.glibc.node || { echo "run npm run prebuild first" >&2; exit 1; }
echo "runtime libraries of the prebuilt addon:"
ldd prebuilds/linux-x64/grpo-native.glibc.node | awk '{print "  " $1}'
if ldd prebuilds/linux-x64/grpo-native.glibc.node | grep -vE 'linux-vdso|libstdc\+\+|libm\.so|libc\.so|ld-linux|libgcc_s' | grep -q so; then
  echo "the prebuild needs more than glibc and libstdc++" >&2; exit 1
fi
tarball="$root/$(npm pack --silent | tail -1)"
consumer="$(mktemp -d)"
trap 'rm -rf "$consumer" "$tarball"' EXIT
cuda_tarball="${1:+$(realpath "$1")}"
cd "$consumer"
npm init -y >/dev/null
npm install --ignore-scripts --no-audit --no-fund "$tarball" $cuda_tarball >/dev/null
test ! -e node_modules/grpo-native/build || { echo "the consumer has a build/ folder: something compiled" >&2; exit 1; }
node --input-type=module -e "
import { logprobsSync, cpuPath } from 'grpo-native';
const { logp } = logprobsSync(new Float32Array([2, 1, 0]), new Int32Array([0]));
if (Math.abs(logp[0] + 0.407606) > 1e-6) throw new Error('wrong result ' + logp[0]);
console.log('packed grpo-native loaded its prebuild and computed logp =', logp[0].toFixed(6), 'on the', cpuPath(), 'path');
"
if [[ -n "$cuda_tarball" ]]; then
  node --input-type=module -e "
import { loadCuda } from 'grpo-native';
const { binding, reason } = loadCuda();
const packaged = 'node_modules/grpo-native-linux-x64-cuda13/grpo_native_cuda.node';
if (!reason.includes(packaged)) throw new Error('loadCuda did not use the GPU package: ' + reason);
if (!binding && !reason.includes('no usable device')) throw new Error('the GPU package did not load: ' + reason);
console.log('packed GPU package found by loadCuda():', reason);
"
fi
