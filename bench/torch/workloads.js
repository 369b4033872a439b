// The grpo-native side of each workload of bench/torch/run.js (the PyTorch side: workloads.py, same names).
// prepare(dir) writes the inputs both sides read and returns { call, check, work }: call() is what is timed,
// check(torchDir) compares grpo-native's outputs with those PyTorch wrote (the worst scaled error, ≤ 1 to pass),
// work(ms) describes the speed of one call (bandwidth, FLOP rate or tokens/s).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BuiltinPolicy, groupAdvantagesSync, linearLogprobsBackwardSync, linearLogprobsSync, logprobsBackwardSync, logprobsSync,
  mulberry32, policyLossSync, sampleSync, samplingProbsSync, sftLoss,
} from '../../dist/index.js';
import { randomLogits, targetsFor } from '../logits.js';
import { batchOf, DEMO, QWEN05B } from '../model-shapes.js';
import { fixed } from '../timing.js';

const write = (dir, name, view) => writeFileSync(join(dir, name), new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
const writeMeta = (dir, meta) => writeFileSync(join(dir, 'meta.json'), JSON.stringify(meta));
/** A copy of the file's bytes in an ArrayBuffer of its own (small files' Buffers share a pool). */
const readBytes = (dir, name) => {
  const bytes = readFileSync(join(dir, name));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
};
const readF32 = (dir, name) => new Float32Array(readBytes(dir, name));
const readI32 = (dir, name) => new Int32Array(readBytes(dir, name));
const CHECK_ROWS = 16;

/** Worst |ours − theirs| / (atol + rtol·|theirs|) over the arrays: ≤ 1 is agreement. */
function scaledError(ours, theirs, atol, rtol) {
  if (ours.length !== theirs.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i] - theirs[i]) / (atol + rtol * Math.abs(theirs[i])));
  return Number.isNaN(worst) ? Infinity : worst;
}

const gbs = (bytes) => (ms, roofs) => `${fixed(bytes / ms / 1e6, 1)} GB/s, ${fixed((100 * bytes) / ms / 1e6 / roofs.readGBs, 0)}% of read roof`;
const gflops = (flops) => (ms, roofs) => `${fixed(flops / ms / 1e6, 0)} GFLOP/s, ${fixed((100 * flops) / ms / 1e6 / roofs.fmaGflops, 0)}% of FMA roof`;
const tokensPerSecond = (tokens) => (ms) => `${fixed((tokens * 1e3) / ms, 0)} tok/s`;

function logprobInputs(dir) {
  const T = 2048, V = 32768;
  const logits = randomLogits(T * V, T + V); // [T, V]
  const targets = targetsFor(T, V);
  write(dir, 'logits.f32', logits);
  write(dir, 'targets.i32', targets);
  writeMeta(dir, { T, V, checkRows: CHECK_ROWS });
  return { T, V, logits, targets };
}

function logprobForward(dir) {
  const { logits, targets } = logprobInputs(dir);
  return {
    call: () => logprobsSync(logits, targets),
    check: (theirs) => scaledError(logprobsSync(logits, targets).logp, readF32(theirs, 'logp.f32'), 1e-5, 1e-5),
    work: gbs(logits.byteLength),
  };
}

function logprobForwardBackward(dir) {
  const { T, V, logits, targets } = logprobInputs(dir);
  const gradLogp = new Float32Array(T).fill(1);
  const gradLogits = new Float32Array(T * V); // [T, V]
  const call = () => {
    const { logp } = logprobsSync(logits, targets);
    logprobsBackwardSync(logits, targets, gradLogp, { out: gradLogits });
    return logp;
  };
  return {
    call,
    check: (theirs) => Math.max(scaledError(call(), readF32(theirs, 'logp.f32'), 1e-5, 1e-5),
      scaledError(gradLogits.subarray(0, CHECK_ROWS * V), readF32(theirs, 'grad_head.f32'), 1e-7, 1e-4)),
    work: gbs(3 * logits.byteLength), // logits read twice, gradient written once
  };
}

function lmHeadInputs(dir) {
  const T = 2048, H = 512, V = 32768;
  const hidden = randomLogits(T * H, 1).map((x) => x / 8); // [T, H]
  const weight = randomLogits(V * H, 2).map((x) => x / 64); // [V, H]
  const targets = targetsFor(T, V);
  for (const [name, view] of [['hidden.f32', hidden], ['weight.f32', weight], ['targets.i32', targets]]) write(dir, name, view);
  writeMeta(dir, { T, H, V });
  return { T, H, V, hidden, weight, targets };
}

function lmHeadForward(dir) {
  const { T, H, V, hidden, weight, targets } = lmHeadInputs(dir);
  return {
    call: () => linearLogprobsSync(hidden, weight, targets),
    check: (theirs) => scaledError(linearLogprobsSync(hidden, weight, targets).logp, readF32(theirs, 'logp.f32'), 1e-4, 1e-5),
    work: gflops(2 * T * H * V),
    memory: 'forwardPeakExtraMb',
  };
}

function lmHeadForwardBackward(dir) {
  const { T, H, V, hidden, weight, targets } = lmHeadInputs(dir);
  const gradLogp = new Float32Array(T).fill(1);
  const grads = { gradHidden: new Float32Array(T * H), gradWeight: new Float32Array(V * H) };
  const call = () => {
    // the backward reuses the forward's lse (PyTorch's autograd likewise keeps its forward's results)
    const forward = linearLogprobsSync(hidden, weight, targets, { lse: true });
    linearLogprobsBackwardSync(hidden, weight, targets, gradLogp, { ...grads, saved: forward });
    return forward.logp;
  };
  return {
    call,
    check: (theirs) => Math.max(scaledError(call(), readF32(theirs, 'logp.f32'), 1e-4, 1e-5),
      scaledError(grads.gradHidden, readF32(theirs, 'grad_hidden.f32'), 1e-6, 1e-3),
      scaledError(grads.gradWeight, readF32(theirs, 'grad_weight.f32'), 1e-6, 1e-3)),
    work: gflops(3 * 2 * T * H * V), // the three products PyTorch runs: logits, d hidden, d weight
    memory: 'backwardPeakExtraMb',
  };
}

/** The shapes of the model workloads: the demo model, or Qwen2.5-0.5B's shape under --large. */
function modelShape(large) {
  return large
    ? { config: QWEN05B, train: [8, 32, 224], score: [8, 32, 224], generate: [4, 16, 16] }
    : { config: DEMO, train: [32, 32, 160], score: [384, 32, 160], generate: [384, 32, 160] };
}

function writeBatch(dir, meta, name, batch) {
  const concat = (rows) => Int32Array.from(rows.flatMap((r) => Array.from(r)));
  write(dir, `${name}-prompts.i32`, concat(batch.prompts));
  write(dir, `${name}-completions.i32`, concat(batch.completions));
  meta[name] = { rows: batch.prompts.length, prompt: batch.prompts[0].length, completion: batch.completions[0].length };
}

/** The policy (seed 1) saved to dir/checkpoint for the PyTorch model, the check batch and the workload's batch. */
async function modelInputs(dir, large, kind) {
  const { config, ...shapes } = modelShape(large);
  const policy = await BuiltinPolicy.createAsync(config, { seed: 1, optimizer: { learningRate: 1e-3 } });
  await policy.save(join(dir, 'checkpoint'));
  const [rows, prompt, completion] = shapes[kind];
  const meta = {};
  const check = batchOf(config, 4, 8, 16, 7);
  const batch = batchOf(config, rows, prompt, completion, 11);
  writeBatch(dir, meta, 'check', check);
  writeBatch(dir, meta, kind, batch);
  return { policy, meta, check, batch, tokens: rows * completion };
}

async function modelScore(dir, large) {
  const { policy, meta, check, batch } = await modelInputs(dir, large, 'score');
  writeMeta(dir, meta);
  const scored = batch.prompts.length * (batch.prompts[0].length + batch.completions[0].length - 1);
  return {
    call: () => policy.score(batch),
    check: async (theirs) => {
      const ours = await policy.score(check);
      const flat = (rows) => Float32Array.from(rows.flatMap((r) => Array.from(r)));
      return Math.max(scaledError(flat(ours.logp), readF32(theirs, 'logp.f32'), 1e-4, 1e-4),
        scaledError(flat(ours.entropy), readF32(theirs, 'entropy.f32'), 1e-4, 1e-4));
    },
    work: tokensPerSecond(scored),
    dispose: () => policy.dispose(),
  };
}

async function modelTrain(dir, large) {
  const { policy, meta, batch } = await modelInputs(dir, large, 'train');
  writeMeta(dir, meta);
  const scored = batch.prompts.length * (batch.prompts[0].length + batch.completions[0].length);
  return {
    call: () => policy.step(batch, sftLoss()),
    // the first step's loss (both sides start from the saved weights); the scores themselves: model-score
    check: async (theirs) => scaledError([(await policy.step(batch, sftLoss())).loss], readF32(theirs, 'loss.f32'), 1e-5, 1e-5),
    work: tokensPerSecond(scored),
    dispose: () => policy.dispose(),
  };
}

async function modelGenerate(dir, large) {
  const { policy, meta, check, batch } = await modelInputs(dir, large, 'generate');
  const newTokens = batch.completions[0].length;
  meta.generate.newTokens = newTokens;
  // PyTorch replays grpo-native's tokens through its KV cache: the log-probs of the cached path must agree
  const generated = await policy.generate(check.prompts, { maxNewTokens: 16, seed: 1, stopTokens: [] });
  writeBatch(dir, meta, 'generated', { prompts: check.prompts, completions: generated.map((g) => g.tokens) });
  writeMeta(dir, meta);
  return {
    call: () => policy.generate(batch.prompts, { maxNewTokens: newTokens, seed: 3, stopTokens: [] }),
    check: (theirs) => scaledError(Float32Array.from(generated.flatMap((g) => Array.from(g.logp))), readF32(theirs, 'logp.f32'), 1e-4, 1e-4),
    work: tokensPerSecond(batch.prompts.length * newTokens),
    dispose: () => policy.dispose(),
  };
}

/** Logits like a language model's: a normal bulk (σ = 2) with a few strong tokens per row (as bench/sampling.bench.js). */
function modelLikeLogits(rows, vocab, seed) {
  const uniform = mulberry32(seed);
  const out = new Float32Array(rows * vocab); // [B, V]
  for (let i = 0; i < out.length; i++) out[i] = 2 * Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  for (let r = 0; r < rows; r++) for (let k = 0; k < 8; k++) out[r * vocab + Math.floor(uniform() * vocab)] += 8 + k;
  return out;
}

function topP(dir) {
  const B = 384, V = 32768, options = { seed: 2, topP: 0.9 };
  const logits = modelLikeLogits(B, V, 5);
  write(dir, 'logits.f32', logits);
  writeMeta(dir, { B, V, topP: options.topP, checkRows: CHECK_ROWS });
  return {
    call: () => sampleSync(logits, V, options),
    check: (theirs) => {
      // the truncated distributions of the first rows agree, and every token grpo-native draws is in PyTorch's support
      const probs = scaledError(samplingProbsSync(logits.subarray(0, CHECK_ROWS * V), V, options), readF32(theirs, 'probs_head.f32'), 1e-6, 1e-4);
      const support = readFileSync(join(theirs, 'support.u8'));
      const outside = Array.from(sampleSync(logits, V, options).tokens).filter((t, r) => support[r * V + t] !== 1).length;
      const theirsOutside = Array.from(readI32(theirs, 'tokens.i32')).filter((t, r) => support[r * V + t] !== 1).length;
      return outside + theirsOutside > 0 ? Infinity : probs;
    },
    work: gbs(logits.byteLength),
  };
}

function grpoLoss(dir) {
  const rows = 512, cols = 2048, n = rows * cols, random = mulberry32(7);
  const logp = Float32Array.from({ length: n }, () => -3 * random()); // [B, T]
  const oldLogp = Float32Array.from(logp, (x) => x + 0.4 * (random() - 0.5));
  const refLogp = Float32Array.from(logp, (x) => x + 0.4 * (random() - 0.5));
  const advantages = Float32Array.from({ length: n }, () => 2 * random() - 1);
  const mask = new Uint8Array(n);
  for (let b = 0; b < rows; b++) mask.fill(1, b * cols, b * cols + Math.floor(cols * (0.5 + 0.5 * random())));
  for (const [name, view] of [['logp.f32', logp], ['old.f32', oldLogp], ['ref.f32', refLogp], ['adv.f32', advantages], ['mask.u8', mask]]) write(dir, name, view);
  const options = { beta: 0.04, epsilonLow: 0.2, klEstimator: 'k3', aggregation: 'localTokenMean' };
  writeMeta(dir, { rows, cols, beta: options.beta, epsilon: options.epsilonLow });
  const input = { shape: [rows, cols], logp, oldLogp, refLogp, advantages, mask };
  const out = new Float32Array(n); // [B, T] gradLogp, reused across calls as a trainer would
  return {
    call: () => policyLossSync(input, { ...options, out }),
    check: (theirs) => {
      const ours = policyLossSync(input, options);
      return Math.max(scaledError([ours.loss], readF32(theirs, 'loss.f32'), 1e-6, 1e-4), scaledError(ours.gradLogp, readF32(theirs, 'grad.f32'), 1e-10, 1e-4));
    },
    work: gbs(n * (4 * 4 + 1 + 4)), // logp, old, ref, advantage and mask read; gradient written
  };
}

function groupAdvantages(dir) {
  const n = 65536, groupSize = 16, random = mulberry32(11);
  const rewards = Float32Array.from({ length: n }, () => Math.round(4 * random()) / 4);
  const options = { groupSize, scale: 'group', stdEpsilon: 1e-4, singletonGroup: 'zero', nanRewards: 'exclude' };
  write(dir, 'rewards.f32', rewards);
  writeMeta(dir, { groupSize, stdEpsilon: options.stdEpsilon });
  const out = new Float32Array(n); // [B] advantages, reused across calls as a trainer would
  return {
    call: () => groupAdvantagesSync(rewards, { ...options, out }),
    check: (theirs) => scaledError(groupAdvantagesSync(rewards, options).advantages, readF32(theirs, 'advantages.f32'), 1e-5, 1e-4),
    work: gbs(n * 8),
  };
}

/** name (as in workloads.py), label, repeats per round (the median of which is the round's time), prepare. */
export const WORKLOADS = [
  { name: 'logprob-forward', label: 'log-prob forward, logits [2048, 32768]', repeats: 3, prepare: logprobForward },
  { name: 'logprob-forward-backward', label: 'log-prob forward + backward', repeats: 1, prepare: logprobForwardBackward },
  { name: 'lm-head-forward', label: 'fused LM head forward, T 2048, H 512, V 32768 (PyTorch: matmul + log_softmax + gather)', repeats: 1, prepare: lmHeadForward },
  { name: 'lm-head-forward-backward', label: 'fused LM head forward + backward', repeats: 1, prepare: lmHeadForwardBackward },
  { name: 'model-train', label: 'built-in model: training step (SFT loss + AdamW)', repeats: 1, prepare: modelTrain, model: 'train' },
  { name: 'model-score', label: 'built-in model: scoring', repeats: 1, prepare: modelScore, model: 'score' },
  { name: 'model-generate', label: 'built-in model: generation with KV cache', repeats: 1, prepare: modelGenerate, model: 'generate' },
  { name: 'top-p', label: 'top-p 0.9 sampling, [384, 32768] (PyTorch: sort-based)', repeats: 3, prepare: topP },
  { name: 'grpo-loss', label: 'GRPO loss forward + backward, 1M tokens (clip 0.2 + β 0.04 k3 KL)', repeats: 5, prepare: grpoLoss },
  { name: 'group-advantages', label: 'group advantages, 64K rewards (G 16)', repeats: 51, prepare: groupAdvantages },
];

/** The label of a model workload at the chosen shape. */
export function modelLabel(workload, large) {
  const { config, ...shapes } = modelShape(large);
  const [rows, prompt, completion] = shapes[workload.model];
  const name = large ? 'Qwen2.5-0.5B shape' : `demo config (d ${config.hiddenSize}, ${config.numLayers} layers, vocab ${config.vocabSize})`;
  return `${workload.label}, ${name}, ${rows} × (${prompt} + ${completion})`;
}

/** A fresh folder under `root` for one workload's inputs and PyTorch's outputs. */
export function workloadDir(root, name) {
  const dir = join(root, name);
  mkdirSync(join(dir, 'torch'), { recursive: true });
  return dir;
}
