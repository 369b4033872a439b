// What the real-engine checks share (scripts/gguf-llama-check.js, remote-llama-check.js, remote-train-check.js):
// node-llama-cpp loaded from a folder outside the project, the small test policies, log-softmax over llama.cpp's
// logits, and how a check reports (real-shape-lora-check.js too).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BuiltinPolicy, trainBpe, Tokenizer } from '../dist/index.js';

export const CORPUS = [
  'Recommend three films like Alien (1979) and Blade Runner (1982).',
  'Question: what is 17 + 25? Working: 17 + 25 = 42. Answer: 42',
  'the cat sat on the mat, and the dog sat on the log.',
  'Lists: 1. The Thing (1982) 2. Arrival (2016) 3. Moon (2009)',
];
export const PROMPTS = ['Recommend three films like', 'Question: what is 17 + 25? Working:', 'the dog sat on', 'Lists: 1. Arrival (2016) 2.'];
const SCALE = Number(process.env.SCALE ?? 16);
/**
 * One sequence per context, reused (clearHistory) for each prompt, and one thread: the models are tiny, and on a
 * loaded machine ggml's worker threads wait on each other (a 48-token request took 10 s with 2 threads, 60-90 ms
 * with 1, same run).
 */
export const CONTEXT = { contextSize: 256, sequences: 1, threads: 1 };
/** The context whose log-probs match the built-in model's to float32 rounding: KV cache in F32, no flash attention. */
export const EXACT_CONTEXT = { ...CONTEXT, flashAttention: false, experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32' };

/** node-llama-cpp from `<folder>/node_modules`, or exit 2 saying why. */
export async function loadLlamaCpp(folder, script) {
  if (!folder) {
    console.error(`usage: node scripts/${script} <folder with node_modules/node-llama-cpp> [--json out.json]`);
    process.exit(2);
  }
  const entry = join(folder, 'node_modules', 'node-llama-cpp', 'dist', 'index.js');
  try {
    return await import(pathToFileURL(entry).href);
  } catch (error) {
    console.error(`${script}: cannot load node-llama-cpp from ${entry}: ${error.message}`);
    process.exit(2);
  }
}

/** The value after `--json` on the command line. */
export function jsonArg() {
  const at = process.argv.indexOf('--json');
  return at >= 0 ? process.argv[at + 1] : undefined;
}

/** Prints a check's JSON summary, writes it to --json's file when given, and exits 1 naming `script` unless it passed. */
export function reportCheck(result, script) {
  const text = JSON.stringify(result, null, 2);
  console.log(text);
  const json = jsonArg();
  if (json) writeFileSync(json, `${text}\n`);
  if (!result.pass) {
    console.error(`${script}: FAILED`);
    process.exit(1);
  }
}

export function testTokenizer() {
  const { tokenizer: json, config } = trainBpe(CORPUS, { vocabSize: 360, specialTokens: ['<|endoftext|>'], minFrequency: 1 });
  return new Tokenizer(json, { ...config, bos_token: '<|endoftext|>' });
}

/** A policy of `architecture` whose weights are N(0, 0.02²) × SCALE and norms near 1: distributions far from uniform. */
export function testPolicy(architecture, tok) {
  const config = {
    vocabSize: 384, hiddenSize: 64, intermediateSize: 160, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 16, maxPositions: 256,
    rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: architecture !== 'Qwen2ForCausalLM', attentionBias: architecture === 'Qwen2ForCausalLM',
    ...(architecture === 'Qwen3ForCausalLM' ? { qkNorm: true } : {}), architecture,
  };
  const policy = BuiltinPolicy.create(config, { seed: 5, tokenizer: tok });
  policy.setTensors(policy.getTensors().map((t) => ({ ...t, data: t.name.endsWith('norm.weight') ? t.data.map((_, i) => 1 + 0.2 * Math.sin(i)) : t.data.map((v) => SCALE * v) })));
  return policy;
}

export function logSoftmax(values) {
  let max = -Infinity;
  for (const v of values) max = Math.max(max, v);
  let sum = 0;
  for (const v of values) sum += Math.exp(v - max);
  const log = Math.log(sum) + max;
  return Float64Array.from(values, (v) => v - log);
}

/** llama.cpp's logits (a map over the tokens its sampler options keep) as a dense array, -Infinity elsewhere. */
export function dense(map, vocab) {
  const out = new Float64Array(vocab).fill(-Infinity);
  for (const [token, logit] of map) out[token] = logit;
  return out;
}

/**
 * Tokens that llama.cpp picks one at a time after `ids` with its sampler `options` (temperature, topK, topP, minP,
 * seed), `count` at most or until one of `stopTokens`; each with its log-prob over the logits node-llama-cpp hands
 * back, which are the processed ones (divided by the temperature, truncated by top-k/top-p/min-p).
 */
export async function engineDecode(sequence, ids, options, vocab, count, stopTokens = []) {
  await sequence.clearHistory();
  const tokens = [], logp = [];
  const ask = (t) => [t, { generateNext: { token: true, logits: true, options } }];
  let input = ids.map((t, i) => (i + 1 < ids.length ? t : ask(t)));
  while (tokens.length < count) {
    const out = await sequence.controlledEvaluate(input);
    const next = out[input.length - 1].next;
    tokens.push(next.token);
    logp.push(logSoftmax(dense(next.logits, vocab))[next.token]);
    if (stopTokens.includes(next.token)) break;
    input = [ask(next.token)];
  }
  return { tokens, logp };
}
