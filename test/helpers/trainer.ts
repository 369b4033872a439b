// Tiny trainer fixtures: a small byte-level BPE, a tiny built-in model, and a movies-multi folder with
// a handful of requests (so an epoch ends after a few steps).
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMoviesMulti, MOVIES_MULTI_DIR } from '../../lib/data/movies-multi-files.js';
import { trainBpe } from '../../lib/cli/bpe.js';
import { BuiltinPolicy } from '../../lib/policy/builtin.js';
import type { ModelConfig } from '../../lib/policy/config.js';
import type { Tokenizer } from '../../lib/policy/tokenizer.js';
import { rowMask, type Rollout } from '../../lib/trainer/rollout.js';

let cached: Tokenizer | undefined;

/** A 300-token BPE trained on a slice of the shipped movie requests and lists. */
export function tinyTokenizer(): Tokenizer {
  cached ??= trainBpe(loadMoviesMulti('validation').flatMap((r) => [r.request, ...r.respondents.flatMap((x) => x.items.map((i) => `${i.title} (${i.year})`))]), 300);
  return cached;
}

export function tinyConfig(vocabSize: number): ModelConfig {
  return {
    vocabSize, hiddenSize: 32, intermediateSize: 64, numLayers: 1, numHeads: 2, numKvHeads: 1, headDim: 16,
    maxPositions: 256, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
  };
}

export async function tinyPolicy(seed = 1): Promise<BuiltinPolicy> {
  const tokenizer = tinyTokenizer();
  return BuiltinPolicy.create(tinyConfig(tokenizer.vocabSize), { seed, tokenizer });
}

/**
 * A movies-multi folder (catalog files copied) whose train split holds, in order, the first requests
 * with the given respondent counts, and the first `evaluate` requests of validation and test.
 */
export function tinyMoviesDir(trainRespondents: readonly number[], evaluate: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'grpo-movies-'));
  mkdirSync(dir, { recursive: true });
  const pool = loadMoviesMulti('train');
  const train = trainRespondents.map((n) => pool.splice(pool.findIndex((r) => r.respondents.length === n), 1)[0]);
  const splits = { train, validation: loadMoviesMulti('validation').slice(0, evaluate), test: loadMoviesMulti('test').slice(0, evaluate) };
  for (const [split, rows] of Object.entries(splits)) writeFileSync(join(dir, `${split}.jsonl`), rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  for (const file of ['catalog.jsonl', 'catalog-index.tsv']) copyFileSync(join(MOVIES_MULTI_DIR, file), join(dir, file));
  return dir;
}

export const tempRunRoot = () => mkdtempSync(join(tmpdir(), 'grpo-runs-'));

/** A rollout of given completion texts (one group). */
export function rolloutOf(texts: string[], truncated: number[]): Rollout {
  const tokenizer = tinyTokenizer();
  const completions = texts.map((t) => tokenizer.encode(t).ids);
  const width = Math.max(...completions.map((c) => c.length));
  return {
    groups: 1, candidates: texts.length, promptIds: texts.map(() => Int32Array.of(0)), completions, texts,
    truncated: Uint8Array.from(truncated), width, mask: rowMask(completions.map((c) => c.length), width),
  };
}
