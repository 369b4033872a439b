#!/usr/bin/env node
// Fails when a hot loop's AVX2 or AVX-512 clone comes out scalar. GRPO_CLONES (native/kernels/runtime/simd.h)
// compiles each hot function three times (GCC target_clones: `.arch_x86_64_v4`, `.arch_x86_64_v3`, `.default`);
// the vectoriser can give up on one target and not another (a select feeding arithmetic became control flow for
// x86-64-v3 only: docs/performance.md), so each clone is disassembled and its 256/512-bit instructions counted.
// Rules: the v3 clone of every listed function has a ymm instruction; the v4 clone a zmm or ymm one; neither has a
// loop without a vector instruction that repeats one scalar float operation 16 times or more (a vector constant broadcast before such a
// loop passed the first rule: simd::max_of and max_checked did, docs/performance.md); every listed function has
// all three clones (a renamed or un-cloned function fails rather than passing unchecked).
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

// Scalar float arithmetic (vaddss, vmaxss, vfmadd231ss, vcomiss, ...), its operation and precision.
const scalarFloat = /\tv?(add|sub|mul|div|max|min|sqrt|u?comi|f[n]?m(?:add|sub)[0-9]*)(s[sd])\s/;
// Lanes written per float that came out scalar leave a loop without a vector instruction that repeats one scalar
// operation once per lane, 16 times (max_of's 16 vmaxss); a vectorised function's scalar fallback and tail loops
// run each element's few operations.
const kScalarLanes = 16;

// How often the most frequent scalar float operation occurs in a loop body.
function mostRepeated(body) {
  const counts = new Map();
  for (const i of body) if (i.scalar) counts.set(i.scalar, (counts.get(i.scalar) ?? 0) + 1);
  return Math.max(0, ...counts.values());
}

// Each function of the disassembly, keyed by its demangled header: its instruction counts, and the most repeats
// of one scalar float operation in one of its loops (a conditional backward jump's [target, jump] address range) without a
// ymm / zmm instruction.
function countByFunction(text) {
  const functions = new Map();
  let current = null;
  for (const line of text.split('\n')) {
    const header = /^[0-9a-f]+ <(.*)>:$/.exec(line);
    if (header) {
      current = { instructions: 0, ymm: 0, zmm: 0, code: [] };
      functions.set(header[1], current);
    } else if (current && /^\s+[0-9a-f]+:\t/.test(line)) {
      const address = parseInt(line, 16);
      const jump = /\tj(?!mp)[a-z]+\s+([0-9a-f]+) </.exec(line);  // conditional: a loop's back edge, not a cold block's return
      const vector = line.includes('%ymm') || line.includes('%zmm');
      const scalar = scalarFloat.exec(line);
      current.code.push({ address, target: jump ? parseInt(jump[1], 16) : null, vector, scalar: scalar ? scalar[1] + scalar[2] : null });
      current.instructions += 1;
      if (line.includes('%ymm')) current.ymm += 1;
      if (line.includes('%zmm')) current.zmm += 1;
    }
  }
  for (const f of functions.values()) {
    const loops = f.code.filter((i) => i.target !== null && i.target <= i.address)
      .map((j) => f.code.filter((i) => i.address >= j.target && i.address <= j.address));
    f.scalarLoop = Math.max(0, ...loops.filter((body) => !body.some((i) => i.vector)).map(mostRepeated));
    delete f.code;
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

// A vector register outside every loop (a constant broadcast in the prologue) does not make a loop vector code.
function failureOf(clone, counts) {
  if (!counts) return 'clone missing';
  if (clone === 'arch_x86_64_v3' && counts.ymm === 0) return 'AVX2 clone has no ymm instruction';
  if (clone === 'arch_x86_64_v4' && counts.ymm + counts.zmm === 0) return 'AVX-512 clone has no ymm/zmm instruction';
  if (clone !== 'default' && counts.scalarLoop >= kScalarLanes)
    return `a loop repeats one scalar float operation ${counts.scalarLoop} times and runs no ymm/zmm instruction`;
  return null;
}

const file = process.argv[2] ?? 'build/Release/grpo_native.node';
const functions = countByFunction(disassemble(file));
const rows = [];
const failures = [];
for (const [family, name] of hotLoops) {
  for (const clone of clones) {
    const counts = findClone(functions, name, clone);
    rows.push({ family, function: name.slice(0, -1), clone, instructions: counts?.instructions ?? 0, ymm: counts?.ymm ?? 0, zmm: counts?.zmm ?? 0,
      'scalar loop': counts?.scalarLoop ?? 0 });
    const failure = failureOf(clone, counts);
    if (failure) failures.push(`${name.slice(0, -1)} [${clone}]: ${failure}`);
  }
}
for (const [family, name, register] of singleBodyLoops) {
  const counts = findPlain(functions, name);
  rows.push({ family, function: name.slice(0, -1), clone: `${register} only`, instructions: counts?.instructions ?? 0, ymm: counts?.ymm ?? 0, zmm: counts?.zmm ?? 0,
    'scalar loop': counts?.scalarLoop ?? 0 });
  if (!counts) failures.push(`${name.slice(0, -1)}: function missing`);
  else if (counts[register] === 0) failures.push(`${name.slice(0, -1)}: has no ${register} instruction`);
  else if (counts.scalarLoop >= kScalarLanes) failures.push(`${name.slice(0, -1)}: a loop repeats one scalar float operation ${counts.scalarLoop} times`);
}
console.log(`SIMD clones of the hot loops in ${file}`);
console.table(rows);
if (failures.length > 0) {
  console.error(`check-simd: ${failures.length} scalar or missing clone(s):\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`check-simd: all ${hotLoops.length} hot loops have vector AVX2 and AVX-512 clones, `
  + `and the ${singleBodyLoops.length} single-body one(s) use their registers`);
