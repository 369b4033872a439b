// CUDA kernels on the GPU: log-prob forward+backward over bf16-sized and fp32 logits, the fused LM head
// forward+backward (float32 inputs on the 3xTF32 GEMM, bf16 inputs on the bf16 tensor-core GEMM), and sampling, timed by CUDA events around the kernels (cudaLastKernelMs: the
// host↔device copies of this first version are excluded and reported apart as the end-to-end time).
// Each result is checked against the CPU kernels on the same inputs before it is timed. Prints "no GPU"
// and exits 0 without a usable device. Run: npm run build:ts && node bench/cuda.bench.js
import {
  loadCuda, linearLogprobsBackwardSync, linearLogprobsSync, logprobsBackwardSync, logprobsSync, sampleSync, toBf16,
} from '../dist/index.js';

const H200 = Object.freeze({ hbmGBs: 4800, bf16Tflops: 989, tf32Tflops: 494 });

function randomArray(n, scale, seed) {
  let state = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = (state / 4294967296 - 0.5) * 2 * scale;
  }
  return out;
}

const targetsFor = (rows, vocab) => Int32Array.from({ length: rows }, (_, t) => (t * 7919) % vocab);

function maxAbsDiff(a, b) {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

function check(name, error, limit) {
  if (!(error <= limit)) throw new Error(`${name}: CUDA differs from the CPU by ${error} (limit ${limit})`);
  return error;
}

/** Median GPU ms (CUDA events) and median end-to-end ms over `reps` calls. */
function timeKernel(gpu, fn, reps = 5) {
  fn(); // warm-up: module load, first allocations
  const kernel = [];
  const wall = [];
  for (let i = 0; i < reps; i++) {
    const start = performance.now();
    fn();
    wall.push(performance.now() - start);
    kernel.push(gpu.cudaLastKernelMs());
  }
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  return { kernelMs: median(kernel), wallMs: median(wall) };
}

function logprobRows(gpu) {
  const rows = [];
  for (const [T, V] of [[1024, 151936], [4096, 32768]]) {
    const logits = randomArray(T * V, 4, T + V); // [T, V]
    const targets = targetsFor(T, V);
    const gradLogp = new Float32Array(T).fill(1);
    const slice = 32 * V; // the CPU check on 32 rows
    const error = check('logprobs', maxAbsDiff(logprobsSync(logits.subarray(0, slice), targets.subarray(0, 32), { device: 'cuda' }).logp,
      logprobsSync(logits.subarray(0, slice), targets.subarray(0, 32)).logp), 1e-4);
    const forward = timeKernel(gpu, () => logprobsSync(logits, targets, { device: 'cuda' }));
    const out = new Float32Array(T * V);
    const backward = timeKernel(gpu, () => logprobsBackwardSync(logits, targets, gradLogp, { device: 'cuda', out }));
    const bytes = logits.byteLength;
    rows.push({ kernel: `logprob fwd ${T}x${V}`, ...forward, GBs: bytes / forward.kernelMs / 1e6, error });
    rows.push({ kernel: `logprob bwd ${T}x${V}`, ...backward, GBs: (2 * bytes) / backward.kernelMs / 1e6, error });
  }
  return rows;
}

function fusedRows(gpu) {
  const [T, H, V] = [2048, 2048, 32768];
  const hidden = randomArray(T * H, 1, 1); // [T, H]
  const weight = randomArray(V * H, 0.05, 2); // [V, H]
  const targets = targetsFor(T, V);
  const gradLogp = new Float32Array(T).fill(1 / T);
  const small = [64, H, V];
  const h64 = hidden.subarray(0, small[0] * H);
  const error = check('linearLogprobs', maxAbsDiff(linearLogprobsSync(h64, weight, targets.subarray(0, 64), { device: 'cuda' }).logp,
    linearLogprobsSync(h64, weight, targets.subarray(0, 64)).logp), 1e-3);
  const forward = timeKernel(gpu, () => linearLogprobsSync(hidden, weight, targets, { device: 'cuda' }), 3);
  const both = timeKernel(gpu, () => linearLogprobsBackwardSync(hidden, weight, targets, gradLogp, { device: 'cuda' }), 3);
  const thv = T * H * V;
  return [
    { kernel: `fused fwd T=${T} H=${H} V=${V}`, ...forward, TFLOPS: (2 * thv) / forward.kernelMs / 1e9, error },
    { kernel: 'fused bwd (recompute, 8THV)', ...both, TFLOPS: (8 * thv) / both.kernelMs / 1e9, error },
  ];
}

// bf16 hidden/weight at a Qwen-sized head (weight 1.2 GB as bf16).
function fusedBf16Rows(gpu) {
  const [T, H, V] = [4096, 4096, 151936];
  const options = { dtype: 'bf16', device: 'cuda' };
  const hidden = toBf16(randomArray(T * H, 1, 3)); // [T, H] bf16 bits
  const weight = toBf16(randomArray(V * H, 0.02, 4)); // [V, H] bf16 bits
  const targets = targetsFor(T, V);
  const gradLogp = new Float32Array(T).fill(1 / T);
  const h16 = hidden.subarray(0, 16 * H);
  const error = check('linearLogprobs bf16', maxAbsDiff(linearLogprobsSync(h16, weight, targets.subarray(0, 16), options).logp,
    linearLogprobsSync(h16, weight, targets.subarray(0, 16), { dtype: 'bf16' }).logp), 1e-3);
  const forward = timeKernel(gpu, () => linearLogprobsSync(hidden, weight, targets, options), 3);
  const both = timeKernel(gpu, () => linearLogprobsBackwardSync(hidden, weight, targets, gradLogp, options), 3);
  const thv = T * H * V;
  return [
    { kernel: `fused bf16 fwd T=${T} H=${H} V=${V}`, ...forward, TFLOPS: (2 * thv) / forward.kernelMs / 1e9, error },
    { kernel: 'fused bf16 bwd (recompute, 8THV)', ...both, TFLOPS: (8 * thv) / both.kernelMs / 1e9, error },
  ];
}

function samplingRows(gpu) {
  const [B, V] = [256, 151936];
  const logits = randomArray(B * V, 3, 7); // [B, V]
  const rows = [];
  for (const [name, options] of [['plain', {}], ['top-k 50 + top-p 0.9', { topK: 50, topP: 0.9 }]]) {
    const cpu = sampleSync(logits, V, { ...options, seed: 3 }).tokens;
    const cuda = sampleSync(logits, V, { ...options, seed: 3, device: 'cuda' }).tokens;
    const differing = cpu.reduce((n, token, r) => n + (token !== cuda[r] ? 1 : 0), 0);
    check(`sample ${name} (rows with another token)`, differing, 0);
    const timed = timeKernel(gpu, () => sampleSync(logits, V, { ...options, seed: 3, device: 'cuda' }));
    rows.push({ kernel: `sample ${name} ${B}x${V}`, ...timed, GBs: logits.byteLength / timed.kernelMs / 1e6, error: 0 });
  }
  return rows;
}

function print(rows) {
  console.log('kernel'.padEnd(36), 'GPU ms'.padStart(9), 'wall ms'.padStart(9), 'GB/s'.padStart(8), '% HBM'.padStart(6),
    'TFLOPS'.padStart(7), '% bf16'.padStart(7), '% tf32'.padStart(7), 'max|Δ| vs CPU'.padStart(14));
  for (const r of rows) {
    const pct = (x, roof) => (x === undefined ? '' : ((100 * x) / roof).toFixed(1));
    console.log(r.kernel.padEnd(36), r.kernelMs.toFixed(3).padStart(9), r.wallMs.toFixed(1).padStart(9),
      (r.GBs?.toFixed(0) ?? '').padStart(8), pct(r.GBs, H200.hbmGBs).padStart(6), (r.TFLOPS?.toFixed(1) ?? '').padStart(7),
      pct(r.TFLOPS, H200.bf16Tflops).padStart(7), pct(r.TFLOPS, H200.tf32Tflops).padStart(7), r.error.toExponential(1).padStart(14));
  }
  console.log(`roofs: H200 HBM ${H200.hbmGBs} GB/s, bf16 dense ${H200.bf16Tflops} TFLOPS, tf32 dense ${H200.tf32Tflops} TFLOPS ` +
    '(the float32 fused GEMM runs 3 TF32 products per float product, so its own roof is about a third of tf32; ' +
    'the bf16 rows run one bf16 product: their roof is the bf16 column)');
}

const { binding: gpu, reason } = loadCuda();
if (!gpu) {
  console.log(`no GPU: ${reason}`);
  process.exit(0);
}
console.log(`CUDA: ${reason}`);
print([...logprobRows(gpu), ...fusedRows(gpu), ...fusedBf16Rows(gpu), ...samplingRows(gpu)]);
