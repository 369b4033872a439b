// Paths a user names that cannot be read: a typed GRPO_INVALID_ARGUMENT naming the path, what was
// expected there and why (a plain ENOENT, or GRPO_DATA_FORMAT for a file that is merely absent, before).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertProtoqa, convertRedial } from '../lib/data/convert.js';
import { readJsonl } from '../lib/data/jsonl.js';
import { loadGsm8k, loadMathDataset } from '../lib/data/math.js';
import { loadMoviesMulti, loadMoviesMultiCatalogs, loadMoviesMultiSource } from '../lib/data/movies-multi-files.js';
import { parseRequestRecord } from '../lib/data/schemas.js';
import { GrpoError } from '../lib/errors.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { Tokenizer } from '../lib/policy/tokenizer.js';
import { tinyConfig, tinyTokenizer } from './helpers/trainer.js';

const scratch = () => mkdtempSync(join(tmpdir(), 'grpo-load-errors-'));

/** The error a promise rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<GrpoError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(GrpoError);
  return error as GrpoError;
}

describe('BuiltinPolicy.load', () => {
  it('a missing folder names the path, the files a checkpoint holds and the reason', async () => {
    const error = await rejection(BuiltinPolicy.load('/missing'));
    expect(error.code).toBe('GRPO_INVALID_ARGUMENT');
    expect(error.message).toBe(
      'Cannot read /missing (expected a checkpoint folder with config.json and model.safetensors (or its shards and their index), as Policy.save writes): ENOENT, it does not exist',
    );
  });

  it('a file instead of a folder, a folder without config.json, a checkpoint without its weights', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'file'), 'x');
    expect((await rejection(BuiltinPolicy.load(join(dir, 'file')))).message).toMatch(/file \(expected a checkpoint folder .*\): it is a file, not a folder$/);
    const config = await rejection(BuiltinPolicy.load(dir));
    expect(config.code).toBe('GRPO_INVALID_ARGUMENT');
    expect(config.message).toMatch(/^Cannot read .*config\.json \(expected the model config of a checkpoint folder .*\): ENOENT, it does not exist$/);
    const policy = BuiltinPolicy.create(tinyConfig(tinyTokenizer().vocabSize), { seed: 1 });
    const saved = join(dir, 'policy');
    await policy.save(saved);
    policy.dispose();
    rmSync(join(saved, 'model.safetensors'));
    const weights = await rejection(BuiltinPolicy.load(saved));
    expect([weights.code, weights.message]).toEqual([
      'GRPO_INVALID_ARGUMENT', `Cannot read ${join(saved, 'model.safetensors')} (expected model weights in the safetensors format): ENOENT, it does not exist`,
    ]);
  });
});

describe('data and tokenizer loaders', () => {
  it('loadGsm8k and loadMathDataset name the path and the records they expected', async () => {
    const gsm8k = await rejection(loadGsm8k('/missing'));
    expect([gsm8k.code, gsm8k.message]).toEqual([
      'GRPO_INVALID_ARGUMENT', 'Cannot read /missing (expected GSM8K JSONL: one {"question", "answer"} record a line): ENOENT, it does not exist',
    ]);
    expect((await rejection(loadMathDataset('/missing/math.jsonl'))).message).toMatch(/^Cannot read \/missing\/math\.jsonl \(expected MATH-style JSONL/);
  });

  it('streaming JSONL: the error comes from the first read, typed (was a plain ENOENT from the stream)', async () => {
    const drain = async () => {
      for await (const record of readJsonl('/missing.jsonl', parseRequestRecord)) expect(record).toBeUndefined();
    };
    const error = await rejection(drain());
    expect(error.message).toBe('Cannot read /missing.jsonl (expected a JSONL file: one JSON record a line): ENOENT, it does not exist');
  });

  it('movies-multi folders name the split and the files a folder holds', async () => {
    const dir = scratch();
    expect(() => loadMoviesMulti('test', dir)).toThrow(/test\.jsonl \(expected the test requests of a movies-multi folder: train\/validation\/test\.jsonl, catalog\.jsonl and catalog-index\.tsv/);
    writeFileSync(join(dir, 'catalog.jsonl'), '');
    let error: unknown;
    try {
      loadMoviesMultiCatalogs(dir);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'GRPO_INVALID_ARGUMENT', message: expect.stringMatching(/catalog-index\.tsv \(expected the catalog index of a movies-multi folder/) });
  });

  it('converters and the generator source name the format they read', () => {
    expect(() => convertRedial('/missing.jsonl')).toThrow('Cannot read /missing.jsonl (expected ReDial JSONL: one dialogue with messages and movieMentions a line): ENOENT, it does not exist');
    expect(() => convertProtoqa('/missing.jsonl')).toThrow(/^Cannot read \/missing\.jsonl \(expected ProtoQA JSONL/);
    expect(() => loadMoviesMultiSource('/missing')).toThrow(
      /^Cannot read \/missing\/movies-catalog-1900-1949\.jsonl \(expected the movie catalog of a shared data folder \(movies-catalog-1900-1949\.jsonl, movies-catalog\.jsonl, redial-movies\.jsonl\)\): ENOENT/,
    );
  });

  it('Tokenizer.fromFolder: a missing tokenizer.json is unreadable, a non-object one malformed', async () => {
    const error = await rejection(Tokenizer.fromFolder('/missing'));
    expect([error.code, error.message]).toEqual([
      'GRPO_INVALID_ARGUMENT', 'Cannot read /missing/tokenizer.json (expected a Hugging Face tokenizer.json): ENOENT, it does not exist',
    ]);
    const dir = scratch();
    writeFileSync(join(dir, 'tokenizer.json'), '[1, 2]');
    expect(await rejection(Tokenizer.fromFolder(dir))).toMatchObject({ code: 'GRPO_DATA_FORMAT', message: expect.stringContaining('tokenizer.json: expected a JSON object') });
  });
});
