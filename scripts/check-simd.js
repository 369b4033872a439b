#!/usr/bin/env node
// Fails when a hot loop's AVX2 or AVX-512 clone comes out scalar. GRPO_CLONES (native/kernels/runtime/simd.h)
// compiles each hot function three times (GCC target_clones: `.arch_x86_64_v4`, `.arch_x86_64_v3`, `.default`);
// the vectoriser can give up on one target and not another (a select feeding arithmetic became control flow for
// x86-64-v3 only: docs/performance.md), so each clone is disassembled and its 256/512-bit instructions counted.
// Rules: the v3 clone of every listed function has a ymm instruction; the v4 clone a zmm or ymm one; every
// listed function has all three clones (a renamed or un-cloned function fails rather than passing unchecked).
// Read a release build: a sanitized one (npm run test:native's build-asan) is not vectorised at all.
// Usage: node scripts/check-simd.js [addon or library; default build/Release/grpo_native.node]  (needs objdump)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// The hot loops of each kernel family, by their demangled name up to the parameter list.
const hotLoops = [
  ['logprob', 'grpo::simd::max_checked('],
  ['logprob', 'grpo::simd::max_of('],
  ['logprob', 'grpo::exp_moments('],
  ['logprob', 'grpo::exp_moments_next_max('],
  ['logprob', 'grpo::exp_sum_next_max('],
  ['logprob', 'grpo::exp_span('],
  ['logprob', 'grpo::scale_span('],
  ['logprob', 'grpo::softmax_row_backward('],
  ['logprob bf16', 'grpo::linear_logprob::(anonymous namespace)::widen_span('],
  ['logprob bf16', 'grpo::linear_logprob::(anonymous namespace)::round_span('],
  ['loss', 'grpo::(anonymous namespace)::row_lanes('],
  ['loss', 'grpo::mask_count('],
  ['sampling', 'grpo::sampling::masked_copy('],
  ['sampling', 'grpo::sampling::exp_weights('],
  ['sampling', 'grpo::sampling::tail_at_least('],
  ['sampling', 'grpo::sampling::block_maxima('],
  ['sampling', 'grpo::sampling::draw_block_sums('],
  ['advantage', 'grpo::batch_stat('],
  ['advantage', 'grpo::group_scales('],
  ['advantage', 'grpo::lane_values('],
  ['advantage', 'grpo::lane_moments('],
  ['advantage', 'grpo::lane_advantages('],
  ['advantage', 'grpo::advantage_checks::any_infinite('],
  ['model', 'grpo::model::(anonymous namespace)::forward_rows('],
  ['model', 'grpo::model::(anonymous namespace)::backward_rows('],
  ['model', 'grpo::model::(anonymous namespace)::weight_grad_columns('],
  ['model', 'grpo::model::(anonymous namespace)::swiglu('],
  ['model', 'grpo::model::(anonymous namespace)::swiglu_backward('],
  ['model', 'grpo::model::(anonymous namespace)::softmax_row('],
  ['model', 'grpo::model::(anonymous namespace)::forward_row('],
  ['model', 'grpo::model::(anonymous namespace)::probabilities('],
  ['model', 'grpo::model::(anonymous namespace)::score_grads('],
  ['model', 'grpo::model::(anonymous namespace)::rotate_rows('],
  ['model', 'grpo::model::(anonymous namespace)::update_span('],
  ['roofline', 'grpo::(anonymous namespace)::sum_block('],
  ['roofline', 'grpo::(anonymous namespace)::fma_chains('],
];
const clones = ['arch_x86_64_v4', 'arch_x86_64_v3', 'default'];
// Hot loops with one body for one instruction set, which must use its registers: the files compiled for x86-64-v4
// alone (GRPO_HAS_AVX512_CODE, simd.h: GCC vectors of 16 floats), run where cpuPath() is avx512, and the float16
// widenings written with F16C / AVX-512 intrinsics (runtime/dtype16.cc).
const singleBodyLoops = [
  ['loss', 'grpo::loss_lanes::row_lanes_avx512(', 'zmm'],
  ['model f16', 'grpo::(anonymous namespace)::widen_f16_avx512(', 'zmm'],
  ['model f16', 'grpo::(anonymous namespace)::widen_f16_f16c(', 'ymm'],
];

function disassemble(file) {
  if (!existsSync(file)) throw new Error(`${file} not found: build the addon first (npm run build:native, or npm ci)`);
  const result = spawnSync('objdump', ['-d', '-C', '--no-show-raw-insn', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (result.error || result.status !== 0)
    throw new Error(`objdump -d ${file} failed (binutils installed? the file built?): ${result.error?.message ?? result.stderr}`);
  return result.stdout;
}

// Instruction counts of each function of the disassembly, keyed by its demangled header.
function countByFunction(text) {
  const functions = new Map();
  let current = null;
  for (const line of text.split('\n')) {
    const header = /^[0-9a-f]+ <(.*)>:$/.exec(line);
    if (header) {
      current = { instructions: 0, ymm: 0, zmm: 0 };
      functions.set(header[1], current);
    } else if (current && /^\s+[0-9a-f]+:\t/.test(line)) {
      current.instructions += 1;
      if (line.includes('%ymm')) current.ymm += 1;
      if (line.includes('%zmm')) current.zmm += 1;
    }
  }
  return functions;
}

function findClone(functions, name, clone) {
  for (const [header, counts] of functions) if (header.startsWith(name) && header.endsWith(`[clone .${clone}]`)) return counts;
  return null;
}

function findPlain(functions, name) {
  for (const [header, counts] of functions) if (header.startsWith(name) && !header.includes('[clone ')) return counts;
  return null;
}

function failureOf(clone, counts) {
  if (!counts) return 'clone missing';
  if (clone === 'arch_x86_64_v3' && counts.ymm === 0) return 'AVX2 clone has no ymm instruction';
  if (clone === 'arch_x86_64_v4' && counts.ymm + counts.zmm === 0) return 'AVX-512 clone has no ymm/zmm instruction';
  return null;
}

const file = process.argv[2] ?? 'build/Release/grpo_native.node';
const functions = countByFunction(disassemble(file));
const rows = [];
const failures = [];
for (const [family, name] of hotLoops) {
  for (const clone of clones) {
    const counts = findClone(functions, name, clone);
    rows.push({ family, function: name.slice(0, -1), clone, instructions: counts?.instructions ?? 0, ymm: counts?.ymm ?? 0, zmm: counts?.zmm ?? 0 });
    const failure = failureOf(clone, counts);
    if (failure) failures.push(`${name.slice(0, -1)} [${clone}]: ${failure}`);
  }
}
for (const [family, name, register] of singleBodyLoops) {
  const counts = findPlain(functions, name);
  rows.push({ family, function: name.slice(0, -1), clone: `${register} only`, instructions: counts?.instructions ?? 0, ymm: counts?.ymm ?? 0, zmm: counts?.zmm ?? 0 });
  if (!counts) failures.push(`${name.slice(0, -1)}: function missing`);
  else if (counts[register] === 0) failures.push(`${name.slice(0, -1)}: has no ${register} instruction`);
}
console.log(`SIMD clones of the hot loops in ${file}`);
console.table(rows);
if (failures.length > 0) {
  console.error(`check-simd: ${failures.length} scalar or missing clone(s):\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`check-simd: all ${hotLoops.length} hot loops have vector AVX2 and AVX-512 clones, `
  + `and the ${singleBodyLoops.length} single-body one(s) use their registers`);
