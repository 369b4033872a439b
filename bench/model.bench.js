// The built-in policy at the demo config (vocab 4096, d 256, 4 layers, 4 heads, SwiGLU 688):
// training tokens/s (forward + backward + AdamW; float32 and with bf16 dense matmuls), generation tokens/s (384 sequences, 32-token
// prompts, 160 new tokens, KV cache), scoring tokens/s, the share of a training step spent in its
// matmuls (the same GEMM shapes timed alone) and achieved GFLOP/s against the FMA roof of this run.
// Before timing, cached generation is checked against full recomputation (the plain reference path).
// Run: npx tsc -p tsconfig.json && node bench/model.bench.js [--qwen05b]
import { BuiltinPolicy, cpuPath, getThreads, matmulBf16Kernel, matmulSync, sftLoss } from '../dist/index.js';
import { measureRoofs } from './roof.js';
import { batchOf, DEMO, QWEN05B } from './model-shapes.js';
import { fixed, peakRssMb } from './timing.js';

async function seconds(fn, repeats) {
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const start = performance.now();
    await fn();
    times.push((performance.now() - start) / 1e3);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}

/** Matmul FLOPs of one forward over T tokens of sequences of length L (projections, full-length attention), and
 * the LM head on the `headRows` positions that carry a target (the model skips the others). */
function forwardFlops(c, T, L, headRows) {
  const q = c.numHeads * c.headDim, kv = c.numKvHeads * c.headDim;
  const perLayer = 2 * T * c.hiddenSize * (2 * q + 2 * kv) + 2 * T * 3 * c.hiddenSize * c.intermediateSize + 2 * T * L * q * 2;
  return c.numLayers * perLayer + 2 * headRows * c.hiddenSize * c.vocabSize;
}

/** Median seconds of C [m, n] = A [m, k] · B [n, k]ᵀ into a preallocated C, after a warm-up call. */
function productSeconds(m, n, k) {
  const a = new Float32Array(m * k).fill(0.01), b = new Float32Array(n * k).fill(0.01), out = new Float32Array(m * n);
  matmulSync(a, b, { m, n, k }, { transB: true, out });
  const times = [0, 1, 2].map(() => {
    const start = performance.now();
    matmulSync(a, b, { m, n, k }, { transB: true, out });
    return (performance.now() - start) / 1e3;
  });
  return times.sort((x, y) => x - y)[1];
}

/** The GEMMs of one training step (forward once, backward twice; at the demo shape the head's logits are kept for the
 * backward, docs/policy.md, so it runs no recompute), timed alone. */
function matmulSeconds(c, T, headRows) {
  const q = c.numHeads * c.headDim, kv = c.numKvHeads * c.headDim, H = c.hiddenSize, I = c.intermediateSize;
  const shapes = [[T, q, H], [T, kv, H], [T, kv, H], [T, H, q], [T, I, H], [T, I, H], [T, H, I]];
  const layer = shapes.reduce((sum, [m, n, k]) => sum + productSeconds(m, n, k), 0);
  return 3 * c.numLayers * layer + 3 * productSeconds(headRows, c.vocabSize, H); // backward: 2 products per forward product
}

async function checkCachedGeneration(policy, config) {
  const prompts = batchOf(config, 4, 8, 0, 7).prompts;
  const out = await policy.generate(prompts, { maxNewTokens: 16, seed: 1, stopTokens: [] });
  const scored = await policy.score({ prompts, completions: out.map((g) => g.tokens) });
  let worst = 0;
  out.forEach((g, i) => g.logp.forEach((v, t) => (worst = Math.max(worst, Math.abs(v - scored.logp[i][t])))));
  if (worst > 1e-3) throw new Error(`cached generation differs from recomputation by ${worst}`);
  return worst;
}

async function demo(roofs) {
  const c = DEMO;
  const policy = BuiltinPolicy.create(c, { seed: 1, optimizer: { learningRate: 1e-3 } });
  const worst = await checkCachedGeneration(policy, c);
  const trainRows = 32, prompt = 32, completion = 160, L = prompt + completion, T = trainRows * L;
  const headRows = trainRows * completion; // SFT: a target on each completion token
  const train = batchOf(c, trainRows, prompt, completion, 11);
  const trainS = await seconds(() => policy.step(train, sftLoss()), 3);
  const bf16 = BuiltinPolicy.create(c, { seed: 1, bf16Matmuls: true });
  const trainBf16S = await seconds(() => bf16.step(train, sftLoss()), 3);
  bf16.dispose();
  const scoreBatch = batchOf(c, 384, 32, 160, 21);
  const scoreS = await seconds(() => policy.score(scoreBatch), 2);
  const prompts = scoreBatch.prompts;
  const genS = await seconds(() => policy.generate(prompts, { maxNewTokens: 160, seed: 3, stopTokens: [] }), 1);
  const mmS = matmulSeconds(c, T, headRows);
  const trainFlops = 3 * forwardFlops(c, T, L, headRows);
  return [
    ['check: cached vs recomputed max |Δlogp|', worst.toExponential(1)],
    ['parameters', policy.parameterCount().toLocaleString()],
    ['training tokens/s (32 × 192 per step)', fixed(T / trainS, 0)],
    ['  GFLOP/s (share of FMA roof)', `${fixed(trainFlops / trainS / 1e9, 1)} (${fixed((100 * trainFlops) / trainS / 1e9 / roofs.fmaGflops, 0)}%)`],
    ['  share of the step in matmuls', `${fixed((100 * mmS) / trainS, 0)}%`],
    ['training tokens/s with bf16Matmuls', fixed(T / trainBf16S, 0)],
    ['generation tokens/s (384 × 160 new)', fixed((384 * 160) / genS, 0)],
    ['scoring tokens/s (384 × 192)', fixed((384 * 191) / scoreS, 0)],
    ['peak RSS MB', fixed(peakRssMb(), 0)],
  ];
}

async function qwen05b() {
  const c = QWEN05B;
  const start = performance.now();
  const policy = await BuiltinPolicy.createAsync(c, { seed: 1 });
  const createS = (performance.now() - start) / 1e3;
  const prompts = batchOf(c, 4, 16, 0, 5).prompts;
  const genS = await seconds(() => policy.generate(prompts, { maxNewTokens: 16, seed: 1, stopTokens: [] }), 1);
  const reference = await policy.clone();
  const batch = batchOf(c, 4, 16, 32, 9);
  const stepS = await seconds(async () => {
    await reference.score(batch);
    await policy.step(batch, sftLoss());
  }, 1);
  return [
    ['0.5B-shaped parameters', policy.parameterCount().toLocaleString()],
    ['  create (random init) s', fixed(createS, 1)],
    ['  generate 4 × 16 new tokens after 16-token prompts: tokens/s', fixed((4 * 16) / genS, 1)],
    ['  one GRPO-shaped step (reference score + policy step, 4 × 48 tokens) s', fixed(stepS, 1)],
    ['  peak RSS MB', fixed(peakRssMb(), 0)],
  ];
}

const roofs = await measureRoofs();
console.log(`threads ${getThreads()}, ${cpuPath()}, bf16 kernel ${matmulBf16Kernel()}, FMA roof ${fixed(roofs.fmaGflops, 1)} GFLOP/s, read roof ${fixed(roofs.readGBs, 1)} GB/s`);
const rows = process.argv.includes('--qwen05b') ? await qwen05b() : await demo(roofs);
console.table(Object.fromEntries(rows.map(([k, v]) => [k, v])));
