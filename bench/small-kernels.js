// Times the GRPO loss, group advantages and sampling (top-p 0.9 and plain) workloads of bench/torch/workloads.js
// in this process, without PyTorch: median and best wall time and median CPU time (process.cpuUsage, all threads)
// per call, one JSON line. Run it once per addon (GRPO_NATIVE_ADDON), alternating, to compare builds on a busy
// machine: the CPU time moves less with the load than the wall time.
// Usage: npm run build:ts && node bench/small-kernels.js [threads] [rounds] [workloads...]
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuPath, sampleSync, setThreads } from '../dist/index.js';
import { WORKLOADS } from './torch/workloads.js';

const threads = Number(process.argv[2] || 2), rounds = Number(process.argv[3] || 11);
const names = process.argv.length > 4 ? process.argv.slice(4) : ['grpo-loss', 'group-advantages', 'top-p', 'plain'];
const INNER = { 'grpo-loss': 5, 'group-advantages': 51 }; // calls per round, as bench/torch/workloads.js repeats them
setThreads(threads);
const root = mkdtempSync(join(tmpdir(), 'small-kernels-'));

/** The timed call of a workload; "plain" samples the top-p workload's logits [384, 32768] with no filter. */
function prepare(name) {
  const dir = join(root, name);
  mkdirSync(join(dir, 'torch'), { recursive: true });
  const workload = WORKLOADS.find((w) => w.name === (name === 'plain' ? 'top-p' : name));
  const { call } = workload.prepare(dir);
  if (name !== 'plain') return call;
  const bytes = readFileSync(join(dir, 'logits.f32'));
  const logits = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return () => sampleSync(logits, 32768, { seed: 1 });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const result = { addon: process.env.GRPO_NATIVE_ADDON ?? 'default', cpuPath: cpuPath(), threads };
for (const name of names) {
  const call = prepare(name), inner = INNER[name] ?? 1;
  call();
  call();
  const wall = [], cpu = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint(), startCpu = process.cpuUsage();
    for (let i = 0; i < inner; i++) call();
    const used = process.cpuUsage(startCpu);
    wall.push(Number(process.hrtime.bigint() - start) / 1e6 / inner);
    cpu.push((used.user + used.system) / 1e3 / inner);
  }
  result[name] = { medianMs: +median(wall).toFixed(4), bestMs: +Math.min(...wall).toFixed(4), cpuMs: +median(cpu).toFixed(4) };
}
rmSync(root, { recursive: true, force: true });
console.log(JSON.stringify(result));
