// Rollout tokens/s on this machine: the built-in generator against llama.cpp (node-llama-cpp, installed outside the
// project as for scripts/gguf-llama-check.js) on the same policy exported to GGUF (issue 21's anchor for a CPU user).
//   node scripts/rollout-throughput.js /tmp/llama-engine [--json out.json]
// The demo model's shape (hidden 128, 4 layers, 4 heads / 2 KV heads, head 32, intermediate 352; vocabulary 384),
// 8 prompts × 64 new tokens at temperature 1 with no stop token, all on one thread, each engine two ways: the built-in
// model decoding the 8 as one batch (policy.generate) and one prompt at a time; llama.cpp with 8 sequences of one
// context decoding together (node-llama-cpp batches them) and one sequence after another (sequence.evaluate, its own
// sampler). Three interleaved rounds; the medians and their ratios, the figures to quote on a shared machine.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuiltinPolicy, exportGguf, setThreads } from '../dist/index.js';
import { CONTEXT, jsonArg, loadLlamaCpp, PROMPTS, testTokenizer } from './llama-engine.js';

const NEW_TOKENS = 64, ROUNDS = 3;
const llamaCpp = await loadLlamaCpp(process.argv[2], 'rollout-throughput.js');
const dir = mkdtempSync(join(tmpdir(), 'grpo-throughput-'));
try {
  const tok = testTokenizer();
  const config = {
    vocabSize: 384, hiddenSize: 128, intermediateSize: 352, numLayers: 4, numHeads: 4, numKvHeads: 2, headDim: 32, maxPositions: 256,
    rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
  };
  const policy = BuiltinPolicy.create(config, { seed: 3, tokenizer: tok });
  await policy.save(join(dir, 'policy'));
  await exportGguf(join(dir, 'policy'), join(dir, 'policy.gguf'));
  const prompts = [...PROMPTS, ...PROMPTS].map((p) => Array.from(tok.encode(p).ids));
  setThreads(1);
  const llama = await llamaCpp.getLlama({ gpu: false, build: 'never', logLevel: 'error' });
  const model = await llama.loadModel({ modelPath: join(dir, 'policy.gguf') });
  const context = await model.createContext(CONTEXT);
  const sequence = context.getSequence();

  const parallel = await model.createContext({ ...CONTEXT, sequences: prompts.length });
  const sequences = prompts.map(() => parallel.getSequence());

  const generate = async (batch) => {
    const out = await policy.generate(batch, { temperature: 1, maxNewTokens: NEW_TOKENS, stopTokens: [], seed: 1 });
    return out.reduce((n, g) => n + g.tokens.length, 0);
  };
  const decode = async (seq, ids) => {
    await seq.clearHistory();
    let n = 0;
    for await (const _ of seq.evaluate(ids, { temperature: 1, seed: 1 })) if (++n === NEW_TOKENS) break;
    return n;
  };
  const runs = {
    builtinBatch: () => generate(prompts),
    builtinOneByOne: async () => {
      let n = 0;
      for (const ids of prompts) n += await generate([ids]);
      return n;
    },
    llamaCppParallel: async () => (await Promise.all(prompts.map((ids, i) => decode(sequences[i], ids)))).reduce((a, b) => a + b, 0),
    llamaCppOneByOne: async () => {
      let n = 0;
      for (const ids of prompts) n += await decode(sequence, ids);
      return n;
    },
  };
  const rate = async (run) => {
    const start = process.hrtime.bigint();
    const tokens = await run();
    return tokens / (Number(process.hrtime.bigint() - start) / 1e9);
  };
  for (const run of Object.values(runs)) await run(); // warm-up
  const rates = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) for (const [k, run] of Object.entries(runs)) rates[k].push(await rate(run));
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const tokensPerSecond = Object.fromEntries(Object.entries(rates).map(([k, xs]) => [k, Math.round(median(xs))]));
  const result = {
    tokensPerRun: prompts.length * NEW_TOKENS, tokensPerSecond,
    llamaCppParallelOverBuiltinBatch: tokensPerSecond.llamaCppParallel / tokensPerSecond.builtinBatch,
    llamaCppOneByOneOverBuiltinOneByOne: tokensPerSecond.llamaCppOneByOne / tokensPerSecond.builtinOneByOne,
    rounds: rates,
  };
  console.log(JSON.stringify(result, null, 2));
  const json = jsonArg();
  if (json) writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  await context.dispose();
  await parallel.dispose();
  await model.dispose();
  policy.dispose();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
