#!/usr/bin/env node
// Under AddressSanitizer + UndefinedBehaviorSanitizer:
// 1. the core library and its C/C++ tests, in build-native/ (plain CMake, no Node headers), run with ctest;
// 2. the addon, in build-asan/, loaded into an uninstrumented Node (the ASan runtime preloaded) to run the
//    crash-hunting suite's checks (test/helpers/crash-child.mjs all): inputs transferred or collected mid-call,
//    dispose mid-call, worker_threads. A read of freed or detached memory fails here even when it would not crash.
// GRPO_SANITIZE=OFF runs both without sanitizers. First, scripts/check-simd.js on the release addon (docs/performance.md).
import { spawnSync } from 'node:child_process';

const generator = spawnSync('ninja', ['--version']).status === 0 ? ['-G', 'Ninja'] : [];
const sanitize = process.env.GRPO_SANITIZE === 'OFF' ? 'OFF' : 'ON';
const runtime = (name) => spawnSync('gcc', [`-print-file-name=${name}`], { encoding: 'utf8' }).stdout.trim();
const preload = sanitize === 'ON' ? { LD_PRELOAD: `${runtime('libasan.so')}:${runtime('libubsan.so')}`, ASAN_OPTIONS: 'detect_leaks=0' } : {};
const addon = {
  ...preload,
  GRPO_NATIVE_ADDON: `${process.cwd()}/build-asan/Release/grpo_native.node`,
  UV_THREADPOOL_SIZE: '1', // the transfer checks start each call after its inputs are gone (crash-child.mjs, occupyPool)
};
const cmakeJs = ['node_modules/.bin/cmake-js', 'build', '--out', 'build-asan', `--CDGRPO_SANITIZE=${sanitize}`, '--CDGRPO_BUILD_TESTS=OFF'];
const steps = [
  // No scalar AVX2/AVX-512 clone in the release addon (`npm ci` or `npm run build:native`): sanitizers stop the vectoriser.
  [process.execPath, ['scripts/check-simd.js', 'build/Release/grpo_native.node']],
  ['cmake', ['-S', '.', '-B', 'build-native', ...generator, `-DGRPO_SANITIZE=${sanitize}`, '-DCMAKE_BUILD_TYPE=Release']],
  ['cmake', ['--build', 'build-native', '--parallel', '2']],
  ['ctest', ['--test-dir', 'build-native', '--output-on-failure']],
  [process.execPath, cmakeJs],
  [process.execPath, ['node_modules/.bin/tsc', '-p', 'tsconfig.json']],
  [process.execPath, ['--expose-gc', 'test/helpers/crash-child.mjs', 'all'], addon],
];
for (const [command, args, env = {}] of steps) {
  const { status } = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, UBSAN_OPTIONS: 'print_stacktrace=1', ...env } });
  if (status !== 0) process.exit(status ?? 1);
}
