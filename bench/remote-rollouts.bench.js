// Rollouts from llama.cpp (node-llama-cpp, installed outside the project as for scripts/gguf-llama-check.js) against
// the built-in generator on the same policy exported to GGUF (issue 21's anchor for a CPU user):
//   node bench/remote-rollouts.bench.js /tmp/llama-engine [--json out.json]
// `npm run bench` runs it without a folder: it says so and skips (exit 0). Everything on one thread.
// 1. Tokens/s. The demo model's shape (hidden 128, 4 layers, 4 heads / 2 KV heads, head 32, intermediate 352;
//    vocabulary 384), 8 prompts × 64 new tokens at temperature 1 with no stop token, each engine two ways: the built-in
//    model decoding the 8 as one batch (policy.generate) and one prompt at a time; llama.cpp with 8 sequences of one
//    context decoding together (node-llama-cpp batches them) and one sequence after another (sequence.evaluate, its
//    own sampler). Three interleaved rounds; the medians and their ratios.
// 2. The trainer's side of a step. The remark run of scripts/remote-train-check.js (tiny LoRA policy after a short
//    SFT) at 3 steps × 4 prompts × 4 candidates, ≤ 24 new tokens: rollouts from llama.cpp behind the completions
//    harness with a push per step (merged and reloaded), against the same run with the built-in generator; two
//    interleaved rounds. Per step: the generate, score and whole-step seconds of each, the engine's own decode time,
//    and the remote run's overhead (generate − decode: HTTP, JSON, the trainer's handling) as a share of its step;
//    wall seconds per step with pushes and checkpoints.
// Timings on a shared machine: quote the same-run ratios.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuiltinPolicy, cpuPath, exportGguf, setThreads, train } from '../dist/index.js';
import { CONTEXT, jsonArg, loadLlamaCpp, PROMPTS, testTokenizer } from '../scripts/llama-engine.js';
import { llamaServing, loadPolicy, remoteConfig, rows, startingPolicy, tinyMovies } from '../scripts/remote-train-fixture.js';

const NEW_TOKENS = 64, ROUNDS = 3, TRAIN_ROUNDS = 2;
const SHAPE = { seed: 11, steps: 3, groups: 4, candidates: 4 };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;

async function tokensPerSecond(llamaCpp, dir) {
  const tok = testTokenizer();
  const config = {
    vocabSize: 384, hiddenSize: 128, intermediateSize: 352, numLayers: 4, numHeads: 4, numKvHeads: 2, headDim: 32, maxPositions: 256,
    rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
  };
  const policy = BuiltinPolicy.create(config, { seed: 3, tokenizer: tok });
  await policy.save(join(dir, 'demo-shape'));
  await exportGguf(join(dir, 'demo-shape'), join(dir, 'demo-shape.gguf'));
  const prompts = [...PROMPTS, ...PROMPTS].map((p) => Array.from(tok.encode(p).ids));
  const llama = await llamaCpp.getLlama({ gpu: false, build: 'never', logLevel: 'error' });
  const model = await llama.loadModel({ modelPath: join(dir, 'demo-shape.gguf') });
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
  const sum = (counts) => counts.reduce((a, b) => a + b, 0);
  const oneByOne = async (run) => {
    const counts = [];
    for (const [i, ids] of prompts.entries()) counts.push(await run(ids, i));
    return sum(counts);
  };
  const runs = {
    builtinBatch: () => generate(prompts),
    builtinOneByOne: () => oneByOne((ids) => generate([ids])),
    llamaCppParallel: async () => sum(await Promise.all(prompts.map((ids, i) => decode(sequences[i], ids)))),
    llamaCppOneByOne: () => oneByOne((ids) => decode(sequence, ids)),
  };
  const rate = async (run) => {
    const start = process.hrtime.bigint();
    const tokens = await run();
    return tokens / seconds(start);
  };
  for (const run of Object.values(runs)) await run(); // warm-up
  const rates = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) for (const [k, run] of Object.entries(runs)) rates[k].push(await rate(run));
  const medians = Object.fromEntries(Object.entries(rates).map(([k, xs]) => [k, Math.round(median(xs))]));
  await context.dispose();
  await parallel.dispose();
  await model.dispose();
  policy.dispose();
  return {
    tokensPerRun: prompts.length * NEW_TOKENS, tokensPerSecond: medians, rounds: rates,
    llamaCppParallelOverBuiltinBatch: medians.llamaCppParallel / medians.builtinBatch,
    llamaCppOneByOneOverBuiltinOneByOne: medians.llamaCppOneByOne / medians.builtinOneByOne,
  };
}

/** One training run's per-step means (tokens, seconds); with `server`, the engine's decode time and the overhead. */
async function timedRun(moviesDir, start, runDir, server) {
  const config = remoteConfig(moviesDir, server?.url ?? 'http://127.0.0.1:1', SHAPE, server ? {} : { backend: 'policy' });
  const began = process.hrtime.bigint();
  await train({ config, policy: await BuiltinPolicy.load(start.dir, { lora: config.lora }), runDir, loadPolicy, skipTest: true });
  const wallPerStep = seconds(began) / SHAPE.steps;
  const steps = rows(runDir);
  const phase = (key) => mean(steps.map((m) => m.time[key]));
  const completionTokens = mean(steps.map((m) => m.tokens.completion));
  const out = { completionTokens, generate: phase('generate'), score: phase('score'), step: phase('total'), wallPerStep };
  if (!server) return out;
  const decode = server.log.filter((e) => e.kind === 'completion').reduce((a, e) => a + e.decodeMs, 0) / 1e3 / SHAPE.steps;
  const reloads = server.log.filter((e) => e.kind === 'load').map((e) => e.reloadMs / 1e3);
  return { ...out, engineDecode: decode, overhead: out.generate - decode, overheadShareOfStep: (out.generate - decode) / out.step, reloadPerPush: mean(reloads) };
}

async function trainerSide(llamaCpp, dir) {
  const moviesDir = tinyMovies(join(dir, 'movies'), [1, 2, 1, 2, 1, 2, 1, 2]);
  const start = await startingPolicy(moviesDir, join(dir, 'sft'));
  const serving = await llamaServing(llamaCpp, start, dir);
  try {
    const rounds = [];
    for (let r = 0; r < TRAIN_ROUNDS; r++) {
      const remote = await timedRun(moviesDir, start, join(dir, `remote-${r}`), await serving.serve(SHAPE.steps * SHAPE.groups));
      const local = await timedRun(moviesDir, start, join(dir, `local-${r}`));
      rounds.push({ remote, local, remoteStepOverLocal: remote.step / local.step, remoteScoreOverLocal: remote.score / local.score });
    }
    return { shape: SHAPE, rounds };
  } finally {
    await serving.close();
  }
}

if (!process.argv[2]) {
  console.log('remote-rollouts.bench.js: skipped (needs node-llama-cpp: node bench/remote-rollouts.bench.js <folder with node_modules/node-llama-cpp>)');
  process.exit(0);
}
const llamaCpp = await loadLlamaCpp(process.argv[2], 'remote-rollouts.bench.js');
setThreads(1);
const dir = mkdtempSync(join(tmpdir(), 'grpo-remote-bench-'));
try {
  const machine = { cpu: cpus()[0]?.model, cpus: cpus().length, loadAverage: loadavg(), cpuPath: cpuPath() };
  const result = { machine, throughput: await tokensPerSecond(llamaCpp, dir), trainer: await trainerSide(llamaCpp, dir) };
  console.log(JSON.stringify(result, null, 2));
  const json = jsonArg();
  if (json) writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
