// Hashes the outputs of every kernel family and of the built-in model on fixed, seeded inputs: one line per
// call, `name sha256`. Run it before and after a refactor that must not change results and diff the two:
//   node scripts/output-hashes.js > before.txt   (… change …)   node scripts/output-hashes.js | diff before.txt -
// Needs `npm run build:ts`. Single-threaded and multi-threaded runs must print the same lines (`--threads N`).
import { createHash } from 'node:crypto';
import * as grpo from '../dist/index.js';

const threads = Number(process.argv[process.argv.indexOf('--threads') + 1] || 0);
if (threads > 0) grpo.setThreads(threads);

/** Deterministic uniform floats in [lo, hi) (xorshift32), [n]. */
function floats(n, seed, lo = -4, hi = 4) {
  const out = new Float32Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out[i] = lo + ((hi - lo) * x) / 2 ** 32;
  }
  return out;
}
const ints = (n, seed, max) => Int32Array.from(floats(n, seed, 0, max), Math.floor);

function digest(value) {
  const hash = createHash('sha256');
  const feed = (v) => {
    if (ArrayBuffer.isView(v)) hash.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    else if (Array.isArray(v)) v.forEach(feed);
    else if (v && typeof v === 'object') Object.keys(v).sort().forEach((k) => (hash.update(k), feed(v[k])));
    else hash.update(String(v));
  };
  feed(value);
  return hash.digest('hex').slice(0, 16);
}
const print = (name, value) => console.log(`${name} ${digest(value)}`);

// log-prob over logits [T, V] and the fused LM head [T, H] × [V, H]
const T = 96, V = 1000, H = 64;
const logits = floats(T * V, 1), targets = ints(T, 2, V), gradLogp = floats(T, 3, -1, 1);
print('logprobs', grpo.logprobsSync(logits, targets, { temperature: 0.7, entropy: true }));
print('logprobsBackward', grpo.logprobsBackwardSync(logits, targets, gradLogp, { gradEntropy: floats(T, 4, -1, 1) }));
print('logprobsBackward logp only', grpo.logprobsBackwardSync(logits, targets, gradLogp, { temperature: 0.7 }));
// above the 16 MB of gradient from which the backward streams its output (native/kernels/logprob/logprob.cc)
const wideLogits = floats(160 * 32771, 7), wideTargets = ints(160, 8, 32771);
print('logprobsBackward streamed', grpo.logprobsBackwardSync(wideLogits, wideTargets, floats(160, 9, -1, 1)));
const hidden = floats(T * H, 5, -1, 1), weight = floats(V * H, 6, -1, 1);
print('linearLogprobs', grpo.linearLogprobsSync(hidden, weight, targets, { entropy: true }));
print('linearLogprobsBackward', grpo.linearLogprobsBackwardSync(hidden, weight, targets, gradLogp));
print('linearLogprobs bf16', grpo.linearLogprobsSync(grpo.toBf16(hidden), grpo.toBf16(weight), targets, { dtype: 'bf16' }));
print('matmul', grpo.matmulSync(floats(64 * 48, 7), floats(48 * 80, 8), { m: 64, k: 48, n: 80 }));

// sampling [rows, V]
const rows = 16;
const rowLogits = floats(rows * V, 9);
for (const [name, options] of Object.entries({
  plain: { seed: 1 }, greedy: { temperature: 0 }, topK: { topK: 20, seed: 2 }, topP: { topP: 0.9, seed: 3 },
  minP: { minP: 0.05, seed: 4 }, penalties: { repetitionPenalty: 1.3, presencePenalty: 0.5, history: { ids: Int32Array.of(1, 2, 3, 4, 5), offsets: Int32Array.from({ length: rows + 1 }, (_, r) => Math.min(r * 3, 5)) }, seed: 5 },
})) {
  print(`sample ${name}`, grpo.sampleSync(rowLogits, V, options));
}
print('samplingProbs topP', grpo.samplingProbsSync(rowLogits, V, { topP: 0.8, temperature: 0.9 }));

// advantages: groups of 8 with ties, a NaN and a constant group; rank-wise [G, S, K]; tokens
const rewards = Float32Array.from(floats(64, 10, 0, 3), (r, i) => (i === 5 ? NaN : i >= 56 ? 1 : Math.round(r)));
for (const [name, p] of Object.entries(grpo.presets)) print(`groupAdvantages ${name}`, grpo.groupAdvantagesSync(rewards, { ...p.advantages, groupSize: 8 }));
const rankRewards = Float32Array.from(floats(4 * 8 * 20, 11, 0, 1.4), Math.floor);
print('rankAdvantages', grpo.rankAdvantagesSync(rankRewards, { candidates: 8, ranks: 20 }));

// the policy loss under every preset, [B, L]
const B = 12, L = 40;
const mask = Uint8Array.from(floats(B * L, 12, 0, 1), (u) => (u < 0.85 ? 1 : 0));
const logp = floats(B * L, 13, -3, 0), oldLogp = floats(B * L, 14, -3, 0), refLogp = floats(B * L, 15, -3, 0);
const segments = Int32Array.from({ length: B * L }, (_, i) => Math.floor((i % L) / 4) % 20);
const lossInput = { shape: [B, L], logp, oldLogp, refLogp, advantages: floats(B * L, 16, -2, 2), mask, segments };
for (const [name, p] of Object.entries(grpo.presets)) {
  const options = { ...p.loss, tokenCount: 300, accumulationSteps: 1, maxCompletionLength: L, sequenceCount: B };
  try {
    const { stats, ...values } = grpo.policyLossSync(lossInput, options);
    print(`policyLoss ${name}`, values);
    print(`policyLoss ${name} stats`, stats);
  } catch (error) {
    print(`policyLoss ${name}`, `error ${error.code}`);
  }
}

// the built-in model: init, score, one AdamW step, greedy and sampled generation
const config = {
  vocabSize: 300, hiddenSize: 64, intermediateSize: 128, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 16,
  maxPositions: 128, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: true, architecture: 'Qwen2ForCausalLM',
};
const policy = grpo.BuiltinPolicy.create(config, { seed: 7 });
const batch = { prompts: [ints(9, 17, 300), ints(5, 18, 300)], completions: [ints(12, 19, 300), ints(7, 20, 300)] };
print('model score', await policy.score(batch, { temperature: 0.8 }));
const step = await policy.step(batch, grpo.sftLoss(), { learningRate: 1e-3 });
print('model step', [step.loss, step.gradNorm]);
print('model score after step', await policy.score(batch));
print('model generate greedy', (await policy.generate(batch.prompts, { maxNewTokens: 10, temperature: 0 })).map((g) => [g.tokens, g.logp]));
print('model generate sampled', (await policy.generate(batch.prompts, { maxNewTokens: 10, temperature: 0.9, topP: 0.9, seed: 3 })).map((g) => [g.tokens, g.logp]));
policy.dispose();
