// The GGUF export against a real engine (issue 21): llama.cpp through node-llama-cpp, installed in a folder outside
// the project (.ci/run does it; never a dependency of the package):
//   mkdir /tmp/llama-engine && cd /tmp/llama-engine && npm init -y && npm install node-llama-cpp@3.22.1
//   node scripts/gguf-llama-check.js /tmp/llama-engine [--json out.json]
// For each architecture (llama, mistral → llama, qwen2, qwen3) a small built-in policy with random weights (scaled
// up so that its next-token distributions are far from uniform) over a byte-level BPE is saved, exported with
// exportGguf, and loaded by llama.cpp on the CPU. Checked, with the KV cache in F32 and flash attention off:
//   1. the tokenizer: llama.cpp's tokenize() of each prompt equals Tokenizer.encode;
//   2. the full next-token distribution at every position of each prompt: max |log p_llama − log p_builtin| over
//      the whole vocabulary (log-softmax of llama.cpp's raw logits against policy.logits);
//   3. greedy decoding: llama.cpp's own greedy sampler (temperature 0) against policy.generate at temperature 0;
//   4. sampled completions: tokens that llama.cpp samples at temperature 1 (seeded), their log-probs under
//      llama.cpp's distribution against policy.score of the same tokens.
// Reported but not gated: the same distribution check with node-llama-cpp's default F16 KV cache and a bf16 export.
// Exits 1 when a gated check fails (tolerances below). Needs `npx tsc -p tsconfig.json` first.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportGguf } from '../dist/index.js';
import { CONTEXT, dense, engineDecode, EXACT_CONTEXT, jsonArg, loadLlamaCpp, logSoftmax, PROMPTS, testPolicy, testTokenizer } from './llama-engine.js';

/** Gated tolerances (f32 file, F32 KV cache): both engines compute in float32; what differs is summation order. */
const TOL_DIST = 1e-3;
const TOL_SAMPLED = 1e-3;

const ARCHITECTURES = ['LlamaForCausalLM', 'MistralForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM'];
const NEW_TOKENS = 16;

const entropy = (logp) => -logp.reduce((s, l) => s + (Number.isFinite(l) ? Math.exp(l) * l : 0), 0);

/** Max |Δ log p| over every position of every prompt and the whole vocabulary; the mean entropy of the built-in model's distributions. */
async function distributionGap(sequence, policy, prompts) {
  const V = policy.config.vocabSize;
  let gap = 0, entropySum = 0, positions = 0;
  for (const ids of prompts) {
    await sequence.clearHistory();
    const out = await sequence.controlledEvaluate(ids.map((t) => [t, { generateNext: { logits: true } }]));
    const ref = await policy.logits([ids]);
    for (let t = 0; t < ids.length; t++) {
      const a = logSoftmax(dense(out[t].next.logits, V)), b = logSoftmax(ref.subarray(t * V, (t + 1) * V));
      for (let i = 0; i < V; i++) gap = Math.max(gap, Math.abs(a[i] - b[i]));
      entropySum += entropy(b);
      positions++;
    }
  }
  return { gap, meanEntropy: entropySum / positions, positions };
}

async function checkArchitecture(llamaCpp, architecture, dir) {
  const tok = testTokenizer(), policy = testPolicy(architecture, tok);
  const folder = join(dir, architecture), f32 = join(dir, `${architecture}.gguf`), bf16 = join(dir, `${architecture}.bf16.gguf`);
  await policy.save(folder);
  await exportGguf(folder, f32);
  await exportGguf(folder, bf16, { dtype: 'bf16' });
  const { getLlama } = llamaCpp;
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' });
  const model = await llama.loadModel({ modelPath: f32 });
  const prompts = PROMPTS.map((p) => Array.from(tok.encode(p).ids));
  const tokenizerSame = PROMPTS.every((p, i) => JSON.stringify(Array.from(model.tokenize(p, false))) === JSON.stringify(prompts[i]));

  const context = await model.createContext(EXACT_CONTEXT), sequence = context.getSequence();
  const dist = await distributionGap(sequence, policy, prompts);
  const V = policy.config.vocabSize;
  let greedySame = 0, greedyGap = 0, sampledGap = 0, sampledTokens = 0;
  const truncatedExcess = { sum: 0, max: -Infinity, n: 0 };
  for (let i = 0; i < prompts.length; i++) {
    const engine = await engineDecode(sequence, prompts[i], { temperature: 0 }, V, NEW_TOKENS);
    const [ours] = await policy.generate([prompts[i]], { temperature: 0, maxNewTokens: NEW_TOKENS, stopTokens: [] });
    if (JSON.stringify(Array.from(ours.tokens)) === JSON.stringify(engine.tokens)) greedySame++;
    for (let t = 0; t < Math.min(ours.logp.length, engine.logp.length); t++) greedyGap = Math.max(greedyGap, Math.abs(ours.logp[t] - engine.logp[t]));
    const sampled = await engineDecode(sequence, prompts[i], { temperature: 1, topK: 0, topP: 1, minP: 0, seed: 100 + i }, V, NEW_TOKENS);
    const { logp } = await policy.score({ prompts: [prompts[i]], completions: [sampled.tokens] });
    for (let t = 0; t < sampled.tokens.length; t++) sampledGap = Math.max(sampledGap, Math.abs(logp[0][t] - sampled.logp[t]));
    sampledTokens += sampled.tokens.length;
    // node-llama-cpp's default truncation (top-k 40, top-p 0.95): the engine's log-probs renormalised over what is kept
    const truncated = await engineDecode(sequence, prompts[i], { temperature: 1, seed: 200 + i }, V, NEW_TOKENS);
    const full = await policy.score({ prompts: [prompts[i]], completions: [truncated.tokens] });
    for (let t = 0; t < truncated.tokens.length; t++) {
      const excess = truncated.logp[t] - full.logp[0][t];
      truncatedExcess.sum += excess;
      truncatedExcess.max = Math.max(truncatedExcess.max, excess);
      truncatedExcess.n++;
    }
  }
  await context.dispose();

  const defaultContext = await model.createContext(CONTEXT);
  const f16Cache = await distributionGap(defaultContext.getSequence(), policy, prompts);
  await defaultContext.dispose();
  await model.dispose();
  const bf16Model = await llama.loadModel({ modelPath: bf16 });
  const bf16Context = await bf16Model.createContext(EXACT_CONTEXT);
  const bf16Dist = await distributionGap(bf16Context.getSequence(), policy, prompts);
  await bf16Context.dispose();
  await bf16Model.dispose();
  policy.dispose();

  const pass = tokenizerSame && dist.gap <= TOL_DIST && greedySame === prompts.length && sampledGap <= TOL_SAMPLED;
  return {
    architecture, pass, tokenizerSame, positions: dist.positions, meanEntropyNats: dist.meanEntropy, maxLogpGap: dist.gap,
    greedySame: `${greedySame}/${prompts.length}`, greedyLogpGap: greedyGap, sampledTokens, sampledLogpGap: sampledGap,
    maxLogpGapF16KvCache: f16Cache.gap, maxLogpGapBf16File: bf16Dist.gap,
    truncatedLogpExcessMean: truncatedExcess.sum / truncatedExcess.n, truncatedLogpExcessMax: truncatedExcess.max,
  };
}

const llamaCpp = await loadLlamaCpp(process.argv[2], 'gguf-llama-check.js');
const json = jsonArg();
const dir = mkdtempSync(join(tmpdir(), 'grpo-gguf-check-'));
const rows = [];
try {
  for (const architecture of ARCHITECTURES) rows.push(await checkArchitecture(llamaCpp, architecture, dir));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const fmt = (x) => (typeof x === 'number' && !Number.isInteger(x) ? x.toExponential(2) : String(x));
console.log(`llama.cpp (node-llama-cpp ${llamaCpp.getModuleVersion ? await llamaCpp.getModuleVersion() : ''}) vs the built-in model; gated: max |Δlog p| <= ${TOL_DIST}, greedy identical, sampled |Δlog p| <= ${TOL_SAMPLED}`);
console.log('| architecture | pass | tokenizer | positions | mean entropy (nats) | max abs dlogp, full vocab | greedy same | greedy abs dlogp | sampled tokens | sampled abs dlogp | F16 KV cache: max abs dlogp | bf16 file: max abs dlogp | top-k/p renormalised: dlogp mean, max |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${[r.architecture, r.pass, r.tokenizerSame, r.positions, r.meanEntropyNats.toFixed(2), r.maxLogpGap, r.greedySame, r.greedyLogpGap, r.sampledTokens, r.sampledLogpGap, r.maxLogpGapF16KvCache, r.maxLogpGapBf16File, `${fmt(r.truncatedLogpExcessMean)}, ${fmt(r.truncatedLogpExcessMax)}`].map(fmt).join(' | ')} |`);
}
if (json) writeFileSync(json, `${JSON.stringify(rows, null, 2)}\n`);
if (!rows.every((r) => r.pass)) {
  console.error('gguf-llama-check: FAILED (see the table)');
  process.exit(1);
}
