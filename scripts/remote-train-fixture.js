// What scripts/remote-train-check.js and bench/remote-rollouts.bench.js share: a small movies-multi folder, a tiny
// LoRA-ready starting policy after a short SFT (so completions hold films and rewards vary), its base served by
// llama.cpp behind the completions harness with adapter pushes, and the remark run config on remote rollouts.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BuiltinPolicy, exportGguf, loadMoviesData, loadMoviesMulti, MOVIES_MULTI_DIR, recommendExamples, resolveConfig, sft } from '../dist/index.js';
import { trainBpe } from '../dist/cli/bpe.js';
import { serveCompletions } from './llama-completions-server.js';
import { EXACT_CONTEXT } from './llama-engine.js';

const LORA = { rank: 4, alpha: 8, dropout: 0, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
export const loadPolicy = (dir) => BuiltinPolicy.load(dir);

/** A movies-multi folder whose train split holds the first requests with `respondents` counts; two validation and test requests. */
export function tinyMovies(dir, respondents) {
  mkdirSync(dir, { recursive: true });
  const pool = loadMoviesMulti('train');
  const splits = { train: respondents.map((n) => pool.splice(pool.findIndex((r) => r.respondents.length === n), 1)[0]) };
  for (const split of ['validation', 'test']) splits[split] = loadMoviesMulti(split).slice(0, 2);
  for (const [split, rows] of Object.entries(splits)) writeFileSync(join(dir, `${split}.jsonl`), rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  for (const file of ['catalog.jsonl', 'catalog-index.tsv']) copyFileSync(join(MOVIES_MULTI_DIR, file), join(dir, file));
  return dir;
}

/** The starting policy in `<out>/policy`: hidden 32, 1 layer, a 300-token BPE, after 120 SFT steps. */
export async function startingPolicy(moviesDir, out) {
  const texts = loadMoviesMulti('validation').flatMap((r) => [r.request, ...r.respondents.flatMap((x) => x.items.map((i) => `${i.title} (${i.year})`))]);
  const tokenizer = trainBpe(texts, 300);
  const config = {
    vocabSize: tokenizer.vocabSize, hiddenSize: 32, intermediateSize: 64, numLayers: 1, numHeads: 2, numKvHeads: 1, headDim: 16,
    maxPositions: 256, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
  };
  const policy = BuiltinPolicy.create(config, { seed: 1, tokenizer });
  await sft(policy, recommendExamples(loadMoviesData(moviesDir), 3), { steps: 120, batchSize: 4, learningRate: 1e-2 }, { out });
  policy.dispose();
  return { dir: join(out, 'policy'), vocab: config.vocabSize };
}

/**
 * The base of `start` exported to `<dir>/policy.gguf` (f32) and loaded in llama.cpp; `serve(stopAfter)` starts a
 * harness serving it as "policy" that loads pushed adapters by merging them into the base (GGUF files in `dir`).
 */
export async function llamaServing(llamaCpp, start, dir) {
  await exportGguf(start.dir, join(dir, 'policy.gguf'));
  const llama = await llamaCpp.getLlama({ gpu: false, build: 'never', logLevel: 'error' });
  const base = await llama.loadModel({ modelPath: join(dir, 'policy.gguf') });
  const servers = [];
  const serve = async (stopAfter) => {
    const server = await serveCompletions(base, EXACT_CONTEXT, { vocab: start.vocab, name: 'policy', stopAfter, reload: { llama, base: start.dir, dir } });
    servers.push(server);
    return server;
  };
  const close = async () => {
    for (const s of servers) await s.close();
    await base.dispose();
  };
  return { serve, close };
}

/**
 * The remark run of `shape` ({ seed, steps, groups, candidates }) on the servers at `url`: temperature 1, no
 * truncation, a push per step; `rollouts` overrides those options (`{ backend: 'policy' }`: the same run, local).
 */
export const remoteConfig = (moviesDir, url, shape, rollouts = {}) => resolveConfig({
  recipe: 'remark', ...shape, learningRate: 2e-2, checkpointEvery: 1, testPrompts: 1,
  generation: { maxNewTokens: 24, temperature: 1, topK: 0, topP: 1 }, rewards: { ranks: 3, catalog: 'benchmark' },
  validation: { every: 0, metric: 'unionRecall', patience: 0 }, lora: LORA, data: { moviesDir },
  rollouts: { backend: 'remote', endpoints: [url], pushEvery: 1, maxInFlight: 1, retries: 1, backoffMs: 10, ...rollouts },
});

export const rows = (runDir) => readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
