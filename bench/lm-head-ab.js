// Before → after for the fused LM head on a loaded machine: two builds of the addon loaded into one process,
// their calls alternated A B A B, medians of wall and CPU time (all threads of the process; the other sessions
// on a shared machine disturb CPU time far less than wall time). T 2048, H 512, V 32768, default tile.
// Run: node bench/lm-head-ab.js ROUNDS ADDON_A ADDON_B   (GRPO_THREADS=1 for one thread; B may be the only one
// with the saved-lse backward: it is timed as "backwardSaved" where the addon reads its extra arguments)
import { createRequire } from 'node:module';
import { randomLogits, targetsFor } from './logits.js';

const require = createRequire(import.meta.url);
const [rounds, ...paths] = process.argv.slice(2);
const addons = paths.map((path) => require(path));
for (const addon of addons) addon.setThreads(Number(process.env.GRPO_THREADS ?? 2));
const T = 2048, H = 512, V = 32768;
const hidden = randomLogits(T * H, 1).map((x) => x / 8); // [T, H]
const weight = randomLogits(V * H, 2).map((x) => x / 64); // [V, H]
const targets = targetsFor(T, V);
const options = { temperature: 1, ignoreIndex: -100, chunkRows: 0, chunkVocab: 0 }; // each build's default tile
const logp = new Float32Array(T), lse = new Float32Array(T), gradLogp = new Float32Array(T).fill(1 / T);
const gradHidden = new Float32Array(T * H), gradWeight = new Float32Array(V * H), logits = new Float32Array(T * V);

const calls = (a, isB) => ({
  gemm: () => a.gemm(hidden, weight, logits, { transA: false, transB: true, m: T, n: V, k: H, alpha: 1, beta: 0, lda: H, ldb: H, ldc: V }, false),
  forward: () => a.linearLogprobForward(hidden, weight, null, targets, H, options, logp, null, lse, false),
  backward: () => a.linearLogprobBackward(hidden, weight, null, targets, H, options, gradLogp, null, gradHidden, gradWeight, null, false, false),
  ...(isB && {
    backwardSaved: () => a.linearLogprobBackward(hidden, weight, null, targets, H, options, gradLogp, null, gradHidden, gradWeight,
      null, false, false, lse, null),
  }),
});

const samples = {}; // "A forward" → [{ wall, cpu }]
for (let round = 0; round < Number(rounds); round++)
  for (const [i, addon] of addons.entries())
    for (const [name, call] of Object.entries(calls(addon, i > 0))) {
      const cpu0 = process.cpuUsage(), t0 = performance.now();
      call();
      const cpu = process.cpuUsage(cpu0);
      (samples[`${'AB'[i]} ${name}`] ??= []).push({ wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000 });
    }
const median = (values) => values.slice().sort((x, y) => x - y)[values.length >> 1];
const ms = Object.fromEntries(Object.entries(samples).map(([key, s]) => [key, {
  wall: median(s.map((x) => x.wall)), cpu: median(s.map((x) => x.cpu)),
}]));
console.table(Object.fromEntries(Object.entries(ms).map(([key, m]) => [key, { 'wall ms': m.wall.toFixed(1), 'cpu ms': m.cpu.toFixed(1) }])));
for (const kind of ['wall', 'cpu']) {
  const a = ms['A forward'][kind] + ms['A backward'][kind], b = ms['B forward'][kind] + ms['B backwardSaved'][kind];
  console.log(`${kind}: forward ÷ GEMM A ${(ms['A forward'][kind] / ms['A gemm'][kind]).toFixed(3)}, B ${(ms['B forward'][kind] / ms['B gemm'][kind]).toFixed(3)}; `
    + `forward + backward A ${a.toFixed(0)}, B (saved lse) ${b.toFixed(0)}: ${(a / b).toFixed(3)}×`);
}
