// The grpo-native side of each workload of bench/torch/run.js (the PyTorch side: workloads.py, same names).
// prepare(dir) writes the inputs both sides read and returns { call, check, work }: call() is what is timed,
// check(torchDir) compares grpo-native's outputs with those PyTorch wrote (the worst scaled error, ≤ 1 to pass),
// work(ms) describes the speed of one call (bandwidth, FLOP rate or tokens/s).
// The workloads marked bf16 have a bf16 form (`--bf16`, prepare(dir, large, true)): their dense products run in
// bf16 with float32 sums (the LM head with dtype 'bf16', the model with bf16Matmuls), check() then uses the bf16
// tolerance, and float32Check(torchDir) compares grpo-native's float32 outputs with PyTorch's bf16 ones (the
// driver prints it, and check(torchDir-f32), as each side's bf16 spread in units of that tolerance).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BuiltinPolicy, groupAdvantagesSync, linearLogprobsBackwardSync, linearLogprobsSync, logprobsBackwardSync, logprobsSync,
  mulberry32, policyLossSync, sampleSync, samplingProbsSync, sftLoss, toBf16,
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
const gflops = (flops, bf16) => (ms, roofs) => `${fixed(flops / ms / 1e6, 0)} GFLOP/s, ${fixed((100 * flops) / ms / 1e6 / roofs.fmaGflops, 0)}% of ${bf16 ? 'the float32 ' : ''}FMA roof`;
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
  const call = () => { // the forward's lse saved for the backward, as PyTorch's autograd saves its log_softmax
    const forward = logprobsSync(logits, targets, { lse: true });
    logprobsBackwardSync(logits, targets, gradLogp, { out: gradLogits, saved: forward });
    return forward.logp;
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

/**
 * Tolerances [atol, rtol] of the dense workloads' outputs, float32 and bf16. Each side rounds the inputs of its
 * products to bf16 and sums in float32 in its own order (PyTorch's autocast also rounds each product's result to
 * bf16), so the two bf16 results differ by at most about the sum of the two sides' distances from float32. Those
 * distances, in units of the float32 tolerance (docs/performance.md, run 8; each --bf16 run prints them again, in
 * units of the bf16 tolerance): logp of the LM head 9.1 (grpo-native) and 13.8 (PyTorch); its gradients 8.9 and
 * 8.6; model scores 5.3 and 6.9, generated tokens' logp 4.1 and 5.7; the training step's loss 0.19 and 0.01. The bf16
 * tolerance is the float32 one times about twice the larger spread; the loss keeps the float32 tolerance, which
 * already holds both.
 */
const F32_TOLERANCE = { logp: [1e-4, 1e-5], grad: [1e-6, 1e-3], loss: [1e-5, 1e-5], score: [1e-4, 1e-4] };
const BF16_FACTOR = { logp: 30, grad: 20, loss: 1, score: 15 };
const TOLERANCE = {
  f32: F32_TOLERANCE,
  bf16: Object.fromEntries(Object.entries(F32_TOLERANCE).map(([k, [atol, rtol]]) => [k, [BF16_FACTOR[k] * atol, BF16_FACTOR[k] * rtol]])),
};

/** The LM head's inputs as its dtype takes them: float32, or bf16 bits under --bf16 (rounded once, outside the timing). */
function lmHeadOperands(inputs, bf16) {
  const { hidden, weight } = inputs;
  return bf16 ? [toBf16(hidden), toBf16(weight), { dtype: 'bf16' }] : [hidden, weight, {}];
}

function lmHeadForward(dir, large, bf16) {
  const inputs = lmHeadInputs(dir);
  const { T, H, V, hidden, weight, targets } = inputs;
  const [h, w, dtypeOption] = lmHeadOperands(inputs, bf16);
  const logp = (tolerance) => (theirs, ours) => scaledError(ours.logp, readF32(theirs, 'logp.f32'), ...tolerance.logp);
  const check = logp(bf16 ? TOLERANCE.bf16 : TOLERANCE.f32);
  return {
    call: () => linearLogprobsSync(h, w, targets, dtypeOption),
    check: (theirs) => check(theirs, linearLogprobsSync(h, w, targets, dtypeOption)),
    float32Check: (theirs) => logp(TOLERANCE.bf16)(theirs, linearLogprobsSync(hidden, weight, targets)),
    work: gflops(2 * T * H * V, bf16),
    memory: bf16 ? undefined : 'forwardPeakExtraMb', // bench/fused-memory.js measures the float32 head
  };
}

/** The fused LM head forward + backward; kept: the forward keeps its logits for the backward (keepLogits). */
function lmHeadForwardBackward(dir, large, bf16, kept = false) {
  const inputs = lmHeadInputs(dir);
  const { T, H, V, targets } = inputs;
  const gradLogp = new Float32Array(T).fill(1);
  const grads = { gradHidden: new Float32Array(T * H), gradWeight: new Float32Array(V * H) };
  const keep = kept ? { keepLogits: true, logitsOut: new Float32Array(T * V) } : {}; // [T, V], reused as a trainer would
  const run = ([h, w, dtypeOption]) => {
    // the backward reuses the forward's lse (PyTorch's autograd likewise keeps its forward's results)
    const forward = linearLogprobsSync(h, w, targets, { ...dtypeOption, ...keep, lse: true });
    linearLogprobsBackwardSync(h, w, targets, gradLogp, { ...dtypeOption, ...grads, saved: forward });
    return forward.logp;
  };
  const compare = (tolerance) => (theirs, logp) => Math.max(scaledError(logp, readF32(theirs, 'logp.f32'), ...tolerance.logp),
    scaledError(grads.gradHidden, readF32(theirs, 'grad_hidden.f32'), ...tolerance.grad),
    scaledError(grads.gradWeight, readF32(theirs, 'grad_weight.f32'), ...tolerance.grad));
  const operands = lmHeadOperands(inputs, bf16);
  const check = compare(bf16 ? TOLERANCE.bf16 : TOLERANCE.f32);
  return {
    call: () => run(operands),
    check: (theirs) => check(theirs, run(operands)),
    float32Check: (theirs) => compare(TOLERANCE.bf16)(theirs, run(lmHeadOperands(inputs, false))),
    work: gflops(3 * 2 * T * H * V, bf16), // the three products PyTorch runs: logits, d hidden, d weight
    memory: bf16 ? undefined : kept ? 'keptPeakExtraMb' : 'backwardPeakExtraMb',
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

/** The built-in policy of the model workloads (seed 1), with bf16 dense layers under --bf16. */
const createPolicy = (config, bf16) => BuiltinPolicy.createAsync(config, { seed: 1, optimizer: { learningRate: 1e-3 }, bf16Matmuls: bf16 });

/** Runs `use` on a float32 twin of the policy (the same seed, so the same weights), then frees it. */
async function withFloat32Policy(config, use) {
  const policy = await createPolicy(config, false);
  try {
    return await use(policy);
  } finally {
    policy.dispose();
  }
}

/**
 * The policy (seed 1) saved to dir/checkpoint for the PyTorch model, the check batch and the workload's batch; the
 * model's tolerances (float32, or bf16 under --bf16).
 */
async function modelInputs(dir, large, kind, bf16) {
  const { config, ...shapes } = modelShape(large);
  const policy = await createPolicy(config, bf16);
  await policy.save(join(dir, 'checkpoint'));
  const [rows, prompt, completion] = shapes[kind];
  const meta = {};
  const check = batchOf(config, 4, 8, 16, 7);
  const batch = batchOf(config, rows, prompt, completion, 11);
  writeBatch(dir, meta, 'check', check);
  writeBatch(dir, meta, kind, batch);
  return { config, policy, meta, check, batch, tokens: rows * completion, tolerance: bf16 ? TOLERANCE.bf16 : TOLERANCE.f32 };
}

const flat = (rows) => Float32Array.from(rows.flatMap((r) => Array.from(r)));

async function modelScore(dir, large, bf16) {
  const { config, policy, meta, check, batch, tolerance } = await modelInputs(dir, large, 'score', bf16);
  writeMeta(dir, meta);
  const scored = batch.prompts.length * (batch.prompts[0].length + batch.completions[0].length - 1);
  const compare = async (theirs, scorer, [atol, rtol]) => {
    const ours = await scorer.score(check);
    return Math.max(scaledError(flat(ours.logp), readF32(theirs, 'logp.f32'), atol, rtol),
      scaledError(flat(ours.entropy), readF32(theirs, 'entropy.f32'), atol, rtol));
  };
  return {
    call: () => policy.score(batch),
    check: (theirs) => compare(theirs, policy, tolerance.score),
    float32Check: (theirs) => withFloat32Policy(config, (twin) => compare(theirs, twin, TOLERANCE.bf16.score)),
    work: tokensPerSecond(scored),
    dispose: () => policy.dispose(),
  };
}

async function modelTrain(dir, large, bf16) {
  const { config, policy, meta, batch, tolerance } = await modelInputs(dir, large, 'train', bf16);
  writeMeta(dir, meta);
  const scored = batch.prompts.length * (batch.prompts[0].length + batch.completions[0].length);
  // the first step's loss (both sides start from the saved weights), taken once: each check compares that one step;
  // the scores themselves: model-score
  let firstLoss;
  const compare = (theirs, loss, [atol, rtol]) => scaledError([loss], readF32(theirs, 'loss.f32'), atol, rtol);
  const stepLoss = async (trainee) => (await trainee.step(batch, sftLoss())).loss;
  return {
    call: () => policy.step(batch, sftLoss()),
    check: async (theirs) => compare(theirs, firstLoss ??= await stepLoss(policy), tolerance.loss),
    float32Check: async (theirs) => compare(theirs, await withFloat32Policy(config, stepLoss), TOLERANCE.bf16.loss),
    work: tokensPerSecond(scored),
    dispose: () => policy.dispose(),
  };
}

async function modelGenerate(dir, large, bf16) {
  const { config, policy, meta, check, batch, tolerance } = await modelInputs(dir, large, 'generate', bf16);
  const newTokens = batch.completions[0].length;
  meta.generate.newTokens = newTokens;
  // PyTorch replays grpo-native's tokens through its KV cache: the log-probs of the cached path must agree
  const generated = await policy.generate(check.prompts, { maxNewTokens: 16, seed: 1, stopTokens: [] });
  writeBatch(dir, meta, 'generated', { prompts: check.prompts, completions: generated.map((g) => g.tokens) });
  writeMeta(dir, meta);
  return {
    call: () => policy.generate(batch.prompts, { maxNewTokens: newTokens, seed: 3, stopTokens: [] }),
    check: (theirs) => scaledError(flat(generated.map((g) => g.logp)), readF32(theirs, 'logp.f32'), ...tolerance.score),
    // the float32 twin scores the same tokens (at temperature 1 their log-probs are what its generation would give)
    float32Check: (theirs) => withFloat32Policy(config, async (twin) => {
      const { logp } = await twin.score({ prompts: check.prompts, completions: generated.map((g) => g.tokens) });
      return scaledError(flat(logp), readF32(theirs, 'logp.f32'), ...TOLERANCE.bf16.score);
    }),
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

/** name (as in workloads.py), label, repeats per round (the median of which is the round's time), prepare, bf16 form. */
export const WORKLOADS = [
  { name: 'logprob-forward', label: 'log-prob forward, logits [2048, 32768]', repeats: 3, prepare: logprobForward },
  { name: 'logprob-forward-backward', label: 'log-prob forward + backward (lse saved)', repeats: 1, prepare: logprobForwardBackward },
  { name: 'lm-head-forward', label: 'fused LM head forward, T 2048, H 512, V 32768 (PyTorch: matmul + log_softmax + gather)', repeats: 1, prepare: lmHeadForward, bf16: true },
  { name: 'lm-head-forward-backward', label: 'fused LM head forward + backward', repeats: 1, prepare: lmHeadForwardBackward, bf16: true },
  { name: 'lm-head-forward-backward-kept', label: 'fused LM head forward + backward, logits kept (keepLogits: T × V floats)', repeats: 1,
    prepare: (dir, large, bf16) => lmHeadForwardBackward(dir, large, bf16, true), bf16: true },
  { name: 'model-train', label: 'built-in model: training step (SFT loss + AdamW)', repeats: 1, prepare: modelTrain, model: 'train', bf16: true },
  { name: 'model-score', label: 'built-in model: scoring', repeats: 1, prepare: modelScore, model: 'score', bf16: true },
  { name: 'model-generate', label: 'built-in model: generation with KV cache', repeats: 1, prepare: modelGenerate, model: 'generate', bf16: true },
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
