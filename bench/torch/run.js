// `npm run bench:torch [-- --rounds N] [-- --large] [-- --bf16] [-- name …]`: grpo-native against PyTorch on identical inputs.
// Writes each workload's inputs to a temporary folder, checks that both sides' outputs agree (a workload that
// disagrees is reported and not timed), then alternates one grpo-native and one PyTorch round (A B A B …) and
// prints the medians, their ratio, the read and FMA roofs and cpuPath() of the same run. It installs nothing.
// --bf16: the workloads with a bf16 form only, their dense products in bf16 on both sides (grpo-native: dtype 'bf16',
// bf16Matmuls; PyTorch: bf16 autocast), checked at the bf16 tolerance, each side's kernel and bf16 spread printed.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuPath, getThreads, matmulBf16Kernel } from '../../dist/index.js';
import { measureRoofs } from '../roof.js';
import { fixed } from '../timing.js';
import { modelLabel, workloadDir, WORKLOADS } from './workloads.js';

const here = dirname(fileURLToPath(import.meta.url));
const SCRIPT = join(here, 'torch_bench.py');

const SETUP = `PyTorch is not importable (by ${'$'}TORCH_PYTHON when set, else python3 or /usr/bin/python3). This bench installs nothing; to set it up (Debian):
  apt-get install python3-torch                      # Debian's PyTorch build (uses the system BLAS)
  update-alternatives --config libblas.so.3-x86_64-linux-gnu     # pick OpenBLAS (apt-get install libopenblas0-pthread)
  update-alternatives --config liblapack.so.3-x86_64-linux-gnu
  apt-get install libgoogle-perftools4               # tcmalloc: the bench then preloads libtcmalloc_minimal.so.4
                                                     # into the PyTorch process only (TORCH_TCMALLOC=0: not)
PyTorch runs on as many threads as grpo-native's getThreads() (torch.set_num_threads); GRPO_THREADS sets both.
Check OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE in the environment: a wrong core type slows OpenBLAS down; the bench prints
them and the BLAS build that torch.__config__.show() reports. Another interpreter: TORCH_PYTHON=/path/to/python3.`;

function parseArgs(argv) {
  const args = { rounds: 5, large: false, bf16: false, names: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--rounds') args.rounds = Number(argv[++i]);
    else if (argv[i] === '--large') args.large = true;
    else if (argv[i] === '--bf16') args.bf16 = true;
    else args.names.push(argv[i]);
  }
  if (!(Number.isInteger(args.rounds) && args.rounds >= 1)) throw new Error('--rounds takes a positive integer');
  return args;
}

/** $TORCH_PYTHON, or else the first of python3 and /usr/bin/python3 that imports torch; undefined when none does. */
function findPython() {
  const candidates = process.env.TORCH_PYTHON ? [process.env.TORCH_PYTHON] : ['python3', '/usr/bin/python3'];
  return candidates.find((python) => spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0);
}

const TCMALLOC = '/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4';

/**
 * The PyTorch processes' environment: tcmalloc preloaded when installed (not for grpo-native; TORCH_TCMALLOC=0 keeps it
 * out), and OMP_WAIT_POLICY=PASSIVE unless set: on a loaded machine libgomp's spinning barriers made each small
 * 2-thread op some 20× slower (64 ms against 2.7 ms for the 64K group advantages), which grpo-native's pool does not pay.
 */
function torchEnv() {
  const env = { ...process.env, OMP_WAIT_POLICY: process.env.OMP_WAIT_POLICY ?? 'PASSIVE' };
  if (!process.env.LD_PRELOAD && process.env.TORCH_TCMALLOC !== '0' && existsSync(TCMALLOC)) env.LD_PRELOAD = TCMALLOC;
  return env;
}

/** The chosen workloads; under --bf16 those without a bf16 form are left out, each with a line saying so. */
function chooseWorkloads(args) {
  const named = WORKLOADS.filter((w) => args.names.length === 0 || args.names.includes(w.name));
  if (!args.bf16) return named;
  for (const w of named.filter((w) => !w.bf16)) console.log(`${w.name}: no bf16 form (no dense product), skipped under --bf16`);
  const chosen = named.filter((w) => w.bf16);
  if (chosen.length === 0) throw new Error('--bf16: none of the named workloads has a bf16 form');
  return chosen;
}

/** The PyTorch server (torch_bench.py serve): request(object) resolves with its one-line JSON answer. */
function startTorch(python, threads) {
  const child = spawn(python, [SCRIPT, 'serve', String(threads)], { stdio: ['pipe', 'pipe', 'inherit'], env: torchEnv() });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  lines.on('line', (line) => waiting.shift()?.resolve(JSON.parse(line)));
  child.on('exit', (code) => waiting.splice(0).forEach((w) => w.reject(new Error(`the PyTorch process exited (${code})`))));
  return {
    request: (message) => new Promise((resolve, reject) => {
      waiting.push({ resolve, reject });
      child.stdin.write(`${JSON.stringify(message)}\n`);
    }),
    close: () => child.stdin.end(),
  };
}

async function medianMs(call, repeats) {
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const start = process.hrtime.bigint();
    await call();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b)[repeats >> 1];
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Peak extra MB of each side's LM head, each in a fresh process (bench/fused-memory.js and torch_bench.py peak). */
function peakMemory(python, threads, dir) {
  const ours = JSON.parse(execFileSync(process.execPath, [join(here, '..', 'fused-memory.js'), '2048', '512', '32768'], { encoding: 'utf8' }));
  const theirs = JSON.parse(execFileSync(python, [SCRIPT, 'peak', String(threads), dir], { encoding: 'utf8', env: torchEnv() }));
  return { ours, theirs };
}

/** Under --bf16: how far each side's bf16 outputs are from float32 (its own bf16 against the other's float32). */
async function bf16Spread(ours, dir) {
  const mine = await ours.check(join(dir, 'torch-f32'));
  const theirs = await ours.float32Check(join(dir, 'torch'));
  return `; bf16 vs float32 spread: grpo-native ${fixed(mine, 2)}, PyTorch ${fixed(theirs, 2)} of tolerance`;
}

/** Agreement check, then `rounds` alternating rounds; one table row. */
async function runWorkload(workload, torch, context) {
  const { root, rounds, large, bf16, roofs, python, threads } = context;
  const label = workload.model ? modelLabel(workload, large) : workload.label;
  const dir = workloadDir(root, workload.name);
  const ours = await workload.prepare(dir, large, bf16);
  try {
    const answer = await torch.request({ op: 'setup', workload: workload.name, dir, bf16 });
    if (!answer.ok) throw new Error(`PyTorch setup of ${workload.name} failed: ${JSON.stringify(answer)}`);
    const error = await ours.check(join(dir, 'torch'));
    const spread = bf16 ? await bf16Spread(ours, dir) : '';
    if (!(error <= 1)) return { workload: label, 'grpo-native': 'not timed', PyTorch: 'not timed', 'speed vs PyTorch': '', note: `outputs disagree (scaled error ${fixed(error, 1)})${spread}` };
    await ours.call(); // warm-up (PyTorch's: its setup call)
    const mine = [], theirs = [];
    for (let r = 0; r < rounds; r++) {
      mine.push(await medianMs(ours.call, workload.repeats));
      theirs.push((await torch.request({ op: 'time', workload: workload.name, repeats: workload.repeats })).ms);
    }
    const a = median(mine), b = median(theirs);
    const memory = ours.memory && peakMemory(python, threads, dir);
    const peak = memory ? `; peak extra ${fixed(memory.ours[ours.memory], 0)} MB vs ${fixed(memory.theirs[ours.memory], 0)} MB` : '';
    return { workload: label, 'grpo-native': `${fixed(a, a < 10 ? 2 : 0)} ms`, PyTorch: `${fixed(b, b < 10 ? 2 : 0)} ms`,
      'speed vs PyTorch': `${fixed(b / a)}×`, note: `${ours.work(a, roofs)} (PyTorch ${ours.work(b, roofs)})${peak}; agreement ${fixed(error, 2)} of tolerance${spread}` };
  } finally {
    ours.dispose?.();
    rmSync(dir, { recursive: true, force: true });
  }
}

const args = parseArgs(process.argv.slice(2));
const chosen = chooseWorkloads(args);
const python = findPython();
if (!python) {
  console.error(SETUP);
  process.exit(2);
}
const threads = getThreads();
const torch = startTorch(python, threads);
const root = mkdtempSync(join(tmpdir(), 'grpo-bench-torch-'));
try {
  const config = await torch.request({ op: 'config', bf16: args.bf16 });
  const roofs = await measureRoofs();
  console.log(`grpo-native: cpuPath() ${cpuPath()}, ${threads} threads; read roof ${fixed(roofs.readGBs, 1)} GB/s, FMA roof ${fixed(roofs.fmaGflops, 0)} GFLOP/s`);
  console.log(`PyTorch ${config.version} (${python}): ${config.threads} threads, tcmalloc ${config.tcmalloc ? 'preloaded' : 'not preloaded'}, environment ${JSON.stringify(config.env)}`);
  console.log(`  ${config.blas.join('\n  ')}`);
  if (args.bf16) {
    const k = config.bf16_kernels;
    console.log(`bf16 dense products: grpo-native matmulBf16Kernel() ${matmulBf16Kernel()}; PyTorch autocast, CPU capability ${k.capability}, `
      + `AMX tiles ${k.amx_tile}, oneDNN bf16 ${k.mkldnn_bf16}, oneDNN matmul ${k.onednn_matmul.join(', ') || 'none seen (not oneDNN)'}`);
  }
  console.log(`load average ${loadavg().map((x) => fixed(x)).join(' ')}; ${args.rounds} rounds, A B A B …, medians`);
  const rows = [];
  for (const workload of chosen) {
    rows.push(await runWorkload(workload, torch, { root, rounds: args.rounds, large: args.large, bf16: args.bf16, roofs, python, threads }));
    console.log(JSON.stringify(rows.at(-1)));
  }
  console.table(rows);
  console.log(`load average at the end ${loadavg().map((x) => fixed(x)).join(' ')}`);
  if (rows.some((row) => row['grpo-native'] === 'not timed')) process.exitCode = 1;
} finally {
  torch.close();
  rmSync(root, { recursive: true, force: true });
}
