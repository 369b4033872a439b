#!/usr/bin/env node
// Builds the core library and its C/C++ tests with AddressSanitizer + UndefinedBehaviorSanitizer
// in build-native/ (plain CMake, no Node headers) and runs them with ctest.
import { spawnSync } from 'node:child_process';

const generator = spawnSync('ninja', ['--version']).status === 0 ? ['-G', 'Ninja'] : [];
const sanitize = process.env.GRPO_SANITIZE === 'OFF' ? 'OFF' : 'ON';
const steps = [
  ['cmake', ['-S', '.', '-B', 'build-native', ...generator, `-DGRPO_SANITIZE=${sanitize}`, '-DCMAKE_BUILD_TYPE=Release']],
  ['cmake', ['--build', 'build-native', '--parallel', '2']],
  ['ctest', ['--test-dir', 'build-native', '--output-on-failure']],
];
for (const [command, args] of steps) {
  const { status } = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, UBSAN_OPTIONS: 'print_stacktrace=1' } });
  if (status !== 0) process.exit(status ?? 1);
}
