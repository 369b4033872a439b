// The evidence bench of issue 19 (docs/trainer.md, "A real-shape checkpoint from disk"): writes a Hugging Face
// folder of a real checkpoint's shape with random bf16 weights (bench/hf-folder.js), then, in a fresh process per
// mode (bench/hf-checkpoint-child.js), loads it and measures load time, memory, generation tokens/s and one ReMaRk
// GRPO step; prints the machine, a table, the step carried to ReMaRk's 48 × 8 batch and to a 7B model
// (bench/hf-estimate.js). Minutes to hours at the defaults on 2 cores: a standalone command, not in `npm run bench`.
// Run: npx tsc -p tsconfig.json && node bench/hf-checkpoint.js [--shape qwen3-0.6b] [--modes full,lora]
//   [--requests 8] [--lists 8] [--max-tokens 160] [--micro-batch-tokens 2048] [--rank 16] [--tokenizer <folder>]
//   [--gen-rows 4] [--gen-tokens 16] [--threads 0] [--dir <folder> [--reuse]] [--keep] [--json <file>]
// --dir keeps the folder there (--reuse: a folder already there is not written again); without it, a temporary one is
// removed. --json writes every measurement of each mode.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuPath, getThreads } from '../dist/index.js';
import { estimateStep, kvBytesPerPosition, measuredStep, stepAt, TARGET_7B } from './hf-estimate.js';
import { realConfig, SHAPES, writeHfFolder } from './hf-folder.js';
import { fixed } from './timing.js';

const CHILD = fileURLToPath(new URL('./hf-checkpoint-child.js', import.meta.url));
const GiB = 2 ** 30;
const gib = (bytes) => `${fixed(bytes / GiB, 2)} GiB`;
const mbGib = (mb) => gib(mb * 2 ** 20);

const OPTIONS = {
  shape: { type: 'string', default: 'qwen3-0.6b' }, modes: { type: 'string', default: 'full,lora' },
  requests: { type: 'string', default: '8' }, lists: { type: 'string', default: '8' }, 'max-tokens': { type: 'string', default: '160' },
  'micro-batch-tokens': { type: 'string', default: '2048' }, rank: { type: 'string', default: '16' }, tokenizer: { type: 'string' },
  'gen-rows': { type: 'string', default: '4' }, 'gen-tokens': { type: 'string', default: '16' }, threads: { type: 'string', default: '0' },
  dir: { type: 'string' }, keep: { type: 'boolean', default: false }, reuse: { type: 'boolean', default: false }, json: { type: 'string' },
};

function machine() {
  const model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
  return `${model}, ${cpus().length} cores, ${gib(totalmem())} memory; cpuPath() ${cpuPath()}, ${getThreads()} kernel threads`;
}

function folderBytes(dir) {
  return readdirSync(dir).reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
}

/** Runs one mode's child; its JSON, or its error message. */
function runMode(mode, o) {
  const run = spawnSync(process.execPath, ['--expose-gc', CHILD, JSON.stringify({ ...o, mode })], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const last = run.stdout.trim().split('\n').at(-1);
  if (last?.startsWith('{')) return JSON.parse(last);
  return { mode, error: `the child ended with ${run.signal ?? `exit status ${run.status}`}: ${run.stderr.trim().split('\n').at(-1)}` };
}

function printTable(results) {
  console.log('\nmode  load s  peak after load  gen tok/s (rows × tokens)  step s  step peak  RSS after step  tokens (prompt + completion)  s per 1k tokens');
  for (const r of results) {
    if (r.error) {
      console.log(`${r.mode.padEnd(4)}  failed: ${r.error}`);
      continue;
    }
    const g = r.generation, s = r.step;
    console.log(`${r.mode.padEnd(4)}  ${fixed(r.load.seconds, 1).padStart(6)}  ${mbGib(r.load.peakMb).padStart(15)}  `
      + `${`${fixed(g.tokensPerSecond, 1)} (${g.rows} × ${g.tokens / g.rows})`.padStart(25)}  ${fixed(s.seconds, 1).padStart(6)}  `
      + `${mbGib(s.peakMb).padStart(9)}  ${mbGib(s.rssAfterMb).padStart(14)}  ${`${r.stepTokens} (${s.tokens.prompt} + ${s.tokens.completion})`.padStart(28)}  `
      + `${fixed((1000 * s.seconds) / r.stepTokens, 2).padStart(15)}`);
    const phases = Object.entries(s.phases).filter(([k, v]) => k !== 'total' && v > 0.05).map(([k, v]) => `${k} ${fixed(v, 1)}`).join(', ');
    console.log(`      step phases (s): ${phases}; reference clone ${fixed(s.referenceSeconds, 1)} s; longest completion ${s.completionMax}, truncated ${fixed(100 * s.truncationRate, 0)}%`);
  }
}

/** One estimate with its arithmetic written out (bench/hf-estimate.js). */
function explain(label, m, at, target) {
  const e = estimateStep(m, at, target);
  const kv = kvBytesPerPosition(target);
  console.log(`  ${label}: ${gib(e.bytes)}, ${fixed(e.seconds / 60, 1)} min`);
  console.log(`    state ${gib(m.stateBytes)} × ${fixed(e.byParameters, 3)} (parameters) = ${gib(e.stateBytes)}`
    + `; activations ${fixed(m.activationBytesPerToken / 1024, 1)} KiB/token × ${fixed(e.activationScale, 3)} (hidden × layers) × ${Math.round(at.runTokens)} tokens = ${gib(e.activationBytes)}`);
  console.log(`    generation: rest ${gib(e.generationRest / e.byParameters)} × ${fixed(e.byParameters, 3)} = ${gib(e.generationRest)}`
    + ` + KV ${fixed(kv / 1024, 1)} KiB × ${at.kvRows} rows × ${Math.round(at.cacheLength)} positions = ${gib(e.kvBytes)}`
    + `; time: optimizer ${fixed(e.optimizerSeconds, 1)} s + ${fixed(1000 * e.secondsPerToken, 2)} ms/token × ${Math.round(at.tokens)} tokens`);
}

function printEstimates(results, o) {
  for (const r of results.filter((x) => !x.error)) {
    const gen = r.step.trace.find((t) => t.call === 'generate');
    console.log(`\n${r.mode}: measured state ${gib(r.stateBytes)} (RSS after the step − at the start − activations kept), activations `
      + `${fixed(r.activationBytesPerToken / 1024, 1)} KiB/token (largest micro-batch ${r.runTokens} tokens), the rollout's generate `
      + `${gib(r.generationBytes)} above the RSS before it (${gen.size} KV positions); the bound at this batch: ${gib(estimateStep(r, measuredStep(r)).bytes)} (measured peak ${mbGib(r.step.peakMb)})`);
    const self = { name: o.shape, ...r.model };
    for (const [requests, lists, maxTokens] of [[8, 8, 160], [48, 8, 160]]) {
      explain(`${o.shape} at ${requests} × ${lists} × ${maxTokens}`, r, stepAt(r, requests, lists, maxTokens), self);
    }
    explain(`${TARGET_7B.name} at the measured ${o.requests} × ${o.lists} × ${o.maxTokens}`, r, measuredStep(r), TARGET_7B);
    explain(`${TARGET_7B.name} at 48 × 8 × 160`, r, stepAt(r, 48, 8, 160), TARGET_7B);
    explain(`${o.shape} at 48 × 8 × 160, generation.maxRows 48`, r, stepAt(r, 48, 8, 160, 48), self);
  }
}

async function main() {
  const { values: v } = parseArgs({ options: OPTIONS });
  const number = (name) => Number(v[name]);
  const o = {
    requests: number('requests'), lists: number('lists'), maxTokens: number('max-tokens'), microBatchTokens: number('micro-batch-tokens'),
    rank: number('rank'), genRows: number('gen-rows'), genTokens: number('gen-tokens'), threads: number('threads'), shape: v.shape,
  };
  const modes = v.modes.split(',');
  const bad = [...Object.entries(o)].find(([k, x]) => k !== 'shape' && !(Number.isInteger(x) && x >= (k === 'threads' ? 0 : 1)));
  if (bad) throw new Error(`--${bad[0].replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: expected an integer >= 1 (threads: >= 0) but received ${bad[1]}`);
  if (!modes.every((m) => m === 'full' || m === 'lora')) throw new Error(`--modes: expected full, lora or both but received ${v.modes}`);
  const { config, generation } = realConfig(v.shape);
  console.log(`machine: ${machine()}`);
  console.log(`${SHAPES[v.shape]} shape, random weights; ${o.requests} requests × ${o.lists} lists of up to ${o.maxTokens} tokens, `
    + `microBatchTokens ${o.microBatchTokens}, tokenizer ${v.tokenizer ?? 'synthetic byte-level BPE'}`);
  const dir = v.dir ?? mkdtempSync(join(tmpdir(), 'grpo-hf-'));
  if (v.reuse && existsSync(join(dir, 'config.json'))) {
    console.log(`reusing ${dir} (${gib(folderBytes(dir))})`);
  } else {
    const start = performance.now();
    const { files, tokenizerSize } = await writeHfFolder(dir, { config, generation, tokenizerDir: v.tokenizer });
    console.log(`wrote ${dir}: ${files.join(', ')}, ${gib(folderBytes(dir))}, a tokenizer of ${tokenizerSize} tokens, in ${fixed((performance.now() - start) / 1000, 1)} s`);
  }
  try {
    const results = modes.map((mode) => runMode(mode, { ...o, dir }));
    if (v.json) writeFileSync(v.json, `${JSON.stringify(results, null, 2)}\n`);
    printTable(results);
    printEstimates(results, o);
    if (results.some((r) => r.error)) process.exitCode = 1;
  } finally {
    if (!v.keep && v.dir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
