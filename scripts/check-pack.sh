#!/usr/bin/env bash
# Proves the published package works without a compiler: pack it (with the prebuilt binary),
# install the tarball into an empty project with install scripts disabled, and call a kernel.
# The C ABI library beside the addon (docs/c-abi.md) must carry the ABI major in its SONAME, export exactly
# the functions of the packed headers, and run a C program built against those headers.
# With the GPU package's tarball as argument (scripts/pack-cuda.js), it is installed beside it and must be the
# addon that loadCuda() finds (here without a GPU: loaded, then "no usable device").
# Usage: scripts/check-pack.sh [grpo-native-linux-x64-cuda13-<version>.tgz]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
test -f prebuilds/linux-x64/grpo-native.glibc.node || { echo "run npm run prebuild first" >&2; exit 1; }
test -f prebuilds/linux-x64/libgrpo_native.so || { echo "the prebuild lacks libgrpo_native.so" >&2; exit 1; }
for binary in prebuilds/linux-x64/grpo-native.glibc.node prebuilds/linux-x64/libgrpo_native.so; do
  echo "runtime libraries of $binary:"
  ldd "$binary" | awk '{print "  " $1}'
  if ldd "$binary" | grep -vE 'linux-vdso|libstdc\+\+|libm\.so|libc\.so|ld-linux|libgcc_s' | grep -q so; then
    echo "$binary needs more than glibc and libstdc++" >&2; exit 1
  fi
done
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
packed=node_modules/grpo-native
libdir="$packed/prebuilds/linux-x64"
major="$(sed -n 's/^#define GRPO_ABI_VERSION_MAJOR \([0-9]*\)$/\1/p' "$packed/native/include/grpo/grpo.h")"
readelf -d "$libdir/libgrpo_native.so" | grep -q "SONAME.*\[libgrpo_native\.so\.$major\]" ||
  { echo "libgrpo_native.so lacks the SONAME libgrpo_native.so.$major" >&2; exit 1; }
test -f "$libdir/libgrpo_native.so.$major" || { echo "the package lacks libgrpo_native.so.$major" >&2; exit 1; }
diff <(grep -ohE '\bgrpo_[a-z0-9_]+\(' "$packed"/native/include/grpo/*.h | tr -d '(' | sort -u) \
  <(nm -D --defined-only "$libdir/libgrpo_native.so" | awk '{print $3}' | sort) ||
  { echo "libgrpo_native.so exports differ from the functions the packed headers declare (< headers, > library)" >&2; exit 1; }
for program in c_abi_version c_abi_logprob; do
  "${CC:-cc}" -I "$packed/native/include" "$packed/native/tests/$program.c" -L "$libdir" -lgrpo_native \
    -Wl,-rpath,"$PWD/$libdir" -lm -o "$program"
  "./$program"
done
echo "packed libgrpo_native.so (SONAME libgrpo_native.so.$major) exports the C ABI of its headers and runs C programs built on them"
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
