// The built-in model on the GPU at the Qwen2.5-0.5B shape: training tokens/s (score + backward + AdamW,
// float32 parameters, 3xTF32 matmuls) and generation tokens/s (KV cache, batched decoding), against the
// H200's roofs (bf16 dense tensor cores for training FLOPs, HBM bandwidth for decoding, which reads every
// float32 weight once per step). Before timing, GPU log-probs are checked against the CPU model with the same
// weights. Prints "no GPU" and exits 0 without a usable device. Run: npx tsc -p tsconfig.json && node bench/cuda-model.bench.js
import { BuiltinPolicy, loadCuda, sftLoss } from '../dist/index.js';
import { batchOf, QWEN05B } from './model-shapes.js';
import { fixed } from './timing.js';

const H200 = Object.freeze({ hbmGBs: 4800, bf16Tflops: 989, tf32Tflops: 494 });
async function medianSeconds(fn, repeats) {
  await fn(); // warm-up: allocations, module load
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const start = performance.now();
    await fn();
    times.push((performance.now() - start) / 1e3);
  }
  return times.sort((a, b) => a - b)[repeats >> 1];
}

/** Max |Δlogp| between the CPU and GPU models (same seed, so the same weights) on 2 × 48 tokens. */
async function checkAgainstCpu(gpuPolicy) {
  const cpuPolicy = await BuiltinPolicy.createAsync(QWEN05B, { seed: 1, device: 'cpu' });
  const batch = batchOf(QWEN05B, 2, 16, 32, 3);
  const [want, got] = [await cpuPolicy.score(batch), await gpuPolicy.score(batch)];
  cpuPolicy.dispose();
  let worst = 0;
  want.logp.forEach((row, i) => row.forEach((v, t) => (worst = Math.max(worst, Math.abs(v - got.logp[i][t])))));
  if (!(worst <= 1e-3)) throw new Error(`GPU log-probs differ from the CPU's by ${worst}`);
  return worst;
}

const { binding, reason } = loadCuda();
if (!binding) {
  console.log(`no GPU: ${reason}`);
  process.exit(0);
}
console.log(`GPU: ${reason}`);
const policy = await BuiltinPolicy.createAsync(QWEN05B, { seed: 1, device: 'cuda', optimizer: { learningRate: 1e-5 } });
const params = policy.parameterCount();
const worst = await checkAgainstCpu(policy);
const trainRows = 16, promptLen = 64, completionLen = 448;
const train = batchOf(QWEN05B, trainRows, promptLen, completionLen, 11);
const trainS = await medianSeconds(() => policy.step(train, sftLoss()), 3);
const trainTokens = trainRows * (promptLen + completionLen);
const trainTflops = (6 * params * trainTokens) / trainS / 1e12; // 6·N per token (attention excluded)
const genRows = 64, newTokens = 128;
const prompts = batchOf(QWEN05B, genRows, 32, 0, 21).prompts;
const genS = await medianSeconds(() => policy.generate(prompts, { maxNewTokens: newTokens, seed: 3, stopTokens: [] }), 2);
const stepRoofS = (4 * params) / (H200.hbmGBs * 1e9); // one read of the float32 weights per decoding step
const rows = [
  ['check: max |Δlogp| GPU vs CPU (2 × 48 tokens)', worst.toExponential(1)],
  ['parameters', params.toLocaleString()],
  [`training tokens/s (${trainRows} × ${promptLen + completionLen})`, fixed(trainTokens / trainS, 0)],
  ['  TFLOPS (6·N per token) / % of bf16 roof / % of tf32 roof',
    `${fixed(trainTflops, 1)} / ${fixed((100 * trainTflops) / H200.bf16Tflops, 1)}% / ${fixed((100 * trainTflops) / H200.tf32Tflops, 1)}%`],
  [`generation tokens/s (${genRows} rows × ${newTokens} new, 32-token prompts)`, fixed((genRows * newTokens) / genS, 0)],
  ['  HBM roof of decoding (float32 weights once per step) tokens/s', fixed(genRows / stepRoofS, 0)],
];
console.table(Object.fromEntries(rows));
policy.dispose();
