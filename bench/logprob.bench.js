// Log-prob scoring: plain forward and forward+backward at (2048, 32768) and (512, 151936). Every fast result is
// checked against the float64 reference in the same run before it is timed. The fused LM head:
// bench/linear-logprob.bench.js. Then the CPU time per call on 1 thread. Run: npm run build && node bench/logprob.bench.js
import { getThreads, cpuPath, logprobs, logprobsBackwardSync, logprobsSync, setThreads } from '../dist/index.js';
import { logprobsReference } from '../dist/reference/logprob.js';
import { randomLogits, targetsFor } from './logits.js';
import { measureRoofs } from './roof.js';
import { asyncCopyCost, fixed, maxAbsDiff, measure, once } from './timing.js';

function verifyPlain(logits, targets) {
  const sample = 64; // the float64 reference on every row would dominate the run; 64 rows suffice
  const vocab = logits.length / targets.length;
  const rows = logits.subarray(0, sample * vocab);
  const ref = logprobsReference(rows, targets.subarray(0, sample));
  const ours = logprobsSync(rows, targets.subarray(0, sample)).logp;
  const error = maxAbsDiff(ours, ref.logp);
  if (error > 1e-4) throw new Error(`logprobs differs from the reference by ${error}`);
  return error;
}

function plainRows(roofs) {
  const rows = [];
  for (const [T, V] of [[2048, 32768], [512, 151936]]) {
    const logits = randomLogits(T * V, T + V);
    const targets = targetsFor(T, V);
    const maxError = verifyPlain(logits, targets);
    const gradLogp = new Float32Array(T).fill(1);
    const gradOut = new Float32Array(T * V);
    const bytes = logits.byteLength;
    const forward = measure(`forward ${T}x${V}`, () => logprobsSync(logits, targets));
    const forwardEntropy = measure(`forward+entropy ${T}x${V}`, () => logprobsSync(logits, targets, { entropy: true }));
    const backward = measure(`backward ${T}x${V}`, () => logprobsBackwardSync(logits, targets, gradLogp, { out: gradOut }));
    const saved = logprobsSync(logits, targets, { lse: true });
    const savedBackward = measure(`backward, saved lse ${T}x${V}`,
      () => logprobsBackwardSync(logits, targets, gradLogp, { out: gradOut, saved }));
    const refMs = once(() => logprobsReference(logits, targets));
    rows.push({ kernel: 'logprobs forward', shape: `${T}x${V}`, ms: forward.ms, rme: forward.rme, GBs: bytes / forward.ms / 1e6,
      roof: bytes / roofs.readGBs / 1e6 / forward.ms, vsRef: refMs / forward.ms, maxError });
    rows.push({ kernel: 'forward + entropy', shape: `${T}x${V}`, ms: forwardEntropy.ms, rme: forwardEntropy.rme,
      GBs: bytes / forwardEntropy.ms / 1e6, roof: bytes / roofs.readGBs / 1e6 / forwardEntropy.ms, vsRef: refMs / forwardEntropy.ms, maxError });
    // forward + backward: logits read twice, gradient written once; roof = 2 reads + 1 write at read speed
    const fb = forward.ms + backward.ms;
    rows.push({ kernel: 'forward + backward', shape: `${T}x${V}`, ms: fb, rme: Math.max(forward.rme, backward.rme),
      GBs: (3 * bytes) / fb / 1e6, roof: (3 * bytes) / roofs.readGBs / 1e6 / fb, vsRef: NaN, maxError });
    // with the forward's lse the backward reads the logits once: the same bytes moved, one statistics sweep fewer
    const fs = forward.ms + savedBackward.ms;
    rows.push({ kernel: 'forward + saved backward', shape: `${T}x${V}`, ms: fs, rme: Math.max(forward.rme, savedBackward.rme),
      GBs: (3 * bytes) / fs / 1e6, roof: (3 * bytes) / roofs.readGBs / 1e6 / fs, vsRef: NaN, maxError });
  }
  return rows;
}

const roofs = await measureRoofs();
console.log(`cpu path ${cpuPath()}, ${getThreads()} threads; read roof ${fixed(roofs.readGBs, 1)} GB/s, FMA roof ${fixed(roofs.fmaGflops, 0)} GFLOP/s`);
console.table(plainRows(roofs).map((r) => ({ ...r, ms: fixed(r.ms), rme: `±${fixed(r.rme, 1)}%`, GBs: fixed(r.GBs, 1),
  roof: `${fixed(100 * r.roof, 0)}%`, vsRef: `${fixed(r.vsRef, 0)}×`, maxError: r.maxError.toExponential(1) })));
// CPU time of one call on 1 thread (process user + system time: the work itself, whatever share of a loaded
// machine the process gets), best / median of 7, logits [2048, 32768]: the figures docs/performance.md quotes.
function cpuMs(fn, runs = 7) {
  const times = [];
  for (let r = 0; r < runs; r++) {
    const start = process.cpuUsage();
    fn();
    const { user, system } = process.cpuUsage(start);
    times.push((user + system) / 1000);
  }
  times.sort((a, b) => a - b);
  return `${fixed(times[0], 1)} / ${fixed(times[runs >> 1], 1)} ms`;
}

function cpuRows() {
  const threads = getThreads();
  setThreads(1);
  const [T, V] = [2048, 32768];
  const logits = randomLogits(T * V, T + V), targets = targetsFor(T, V);
  const gradLogp = new Float32Array(T).fill(1), gradOut = new Float32Array(T * V);
  const saved = logprobsSync(logits, targets, { lse: true });
  const rows = [
    ['forward', () => logprobsSync(logits, targets)],
    ['forward + entropy', () => logprobsSync(logits, targets, { entropy: true })],
    ['backward', () => logprobsBackwardSync(logits, targets, gradLogp, { out: gradOut })],
    ['backward + gradEntropy', () => logprobsBackwardSync(logits, targets, gradLogp, { out: gradOut, gradEntropy: gradLogp })],
    ['backward, saved lse', () => logprobsBackwardSync(logits, targets, gradLogp, { out: gradOut, saved })],
  ].map(([kernel, fn]) => ({ kernel, shape: `${T}x${V}`, 'CPU best / median, 1 thread': cpuMs(fn) }));
  setThreads(threads);
  return rows;
}

console.table(cpuRows());
await asyncCopyCost('logprobs forward 512x151936', (x, a) => (a ? logprobs : logprobsSync)(x.logits, x.targets),
  { logits: randomLogits(512 * 151936, 5), targets: targetsFor(512, 151936) });
