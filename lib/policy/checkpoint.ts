// Checkpoint folders in the Hugging Face layout: config.json, model.safetensors (or shards),
// tokenizer files, generation_config.json and, for resuming, optimizer.safetensors + trainer_state.json.
// Everything is written into a temporary sibling folder and renamed into place, so a crash never
// leaves a half-written checkpoint under the final name.
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { GrpoError } from '../errors.js';
import { readUserJson, requireFolder } from '../user-files.js';
import { configFromHf, configToHf, type ModelConfig } from './config.js';
import { readModelWeights, readSafetensors, writeJsonFile, writeModelWeights, writeSafetensors, type NamedTensor } from './safetensors.js';
import { Tokenizer } from './tokenizer.js';

/** Optimizer state for resuming exactly: AdamW moments [parameters] and the step count. */
export interface OptimizerState {
  m: Float32Array;
  v: Float32Array;
  step: number;
}

export interface CheckpointContents {
  config: ModelConfig;
  tensors: NamedTensor[];
  tokenizer?: Tokenizer;
  optimizer?: OptimizerState;
  /** Written to generation_config.json. @defaultValue {} */
  generation?: Record<string, unknown>;
  /** Shard model.safetensors above this many bytes. @defaultValue 4 GiB */
  maxShardBytes?: number;
}

const DEFAULT_MAX_SHARD_BYTES = 4 * 1024 ** 3;

async function writeContents(dir: string, c: CheckpointContents): Promise<void> {
  await writeJsonFile(join(dir, 'config.json'), configToHf(c.config));
  await writeModelWeights(dir, c.tensors, c.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES);
  const eos = c.tokenizer?.eosTokenId;
  await writeJsonFile(join(dir, 'generation_config.json'), { ...(eos === undefined ? {} : { eos_token_id: eos }), ...c.generation });
  if (c.tokenizer) {
    const { tokenizer, config } = c.tokenizer.toJson();
    await writeJsonFile(join(dir, 'tokenizer.json'), tokenizer);
    await writeJsonFile(join(dir, 'tokenizer_config.json'), config);
  }
  if (c.optimizer) await writeOptimizer(dir, c.optimizer);
}

/** Writes optimizer.safetensors (exp_avg, exp_avg_sq) and trainer_state.json (global_step and `extra`) into `dir`. */
export async function writeOptimizer(dir: string, optimizer: OptimizerState, extra: Record<string, unknown> = {}): Promise<void> {
  await writeSafetensors(join(dir, 'optimizer.safetensors'), [
    { name: 'exp_avg', shape: [optimizer.m.length], data: optimizer.m },
    { name: 'exp_avg_sq', shape: [optimizer.v.length], data: optimizer.v },
  ]);
  await writeJsonFile(join(dir, 'trainer_state.json'), { global_step: optimizer.step, ...extra });
}

/** Writes a folder with `write` into `<dir>.tmp-<pid>-<time>`, then renames it to `dir` (replacing an old one). */
export async function writeFolderAtomically(dir: string, write: (temp: string) => Promise<void>): Promise<void> {
  const stamp = `${process.pid}-${Date.now()}`;
  const temp = join(dirname(dir), `.${basename(dir)}.tmp-${stamp}`);
  await mkdir(temp, { recursive: true });
  try {
    await write(temp);
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
  const old = join(dirname(dir), `.${basename(dir)}.old-${stamp}`);
  const replacing = existsSync(dir);
  if (replacing) await rename(dir, old);
  await rename(temp, dir);
  if (replacing) await rm(old, { recursive: true, force: true });
}

/** Writes a checkpoint folder atomically ({@link writeFolderAtomically}). */
export function saveCheckpoint(dir: string, contents: CheckpointContents): Promise<void> {
  return writeFolderAtomically(dir, (temp) => writeContents(temp, contents));
}

export interface LoadedCheckpoint {
  config: ModelConfig;
  tensors: NamedTensor[];
  tokenizer?: Tokenizer;
  optimizer?: OptimizerState;
  /** generation_config.json as it is (written back by save). */
  generation?: Record<string, unknown>;
}

/** What a checkpoint folder holds, for the error when it is missing or unreadable. */
const CHECKPOINT_FOLDER = 'a checkpoint folder with config.json and model.safetensors (or its shards and their index), as Policy.save writes';

/** The optimizer state of `dir` and its trainer_state.json as read (undefined without optimizer.safetensors). */
export async function readOptimizer(dir: string): Promise<{ optimizer: OptimizerState; state: Record<string, unknown> } | undefined> {
  if (!existsSync(join(dir, 'optimizer.safetensors'))) return undefined;
  const tensors = await readSafetensors(join(dir, 'optimizer.safetensors'));
  const state = (await readUserJson(join(dir, 'trainer_state.json'), 'the optimizer step count beside optimizer.safetensors')) as Record<string, unknown> | null;
  const m = tensors.find((t) => t.name === 'exp_avg'), v = tensors.find((t) => t.name === 'exp_avg_sq');
  if (!m || !v || typeof state?.global_step !== 'number') {
    throw new GrpoError('GRPO_DATA_FORMAT', `${dir}: optimizer.safetensors needs exp_avg and exp_avg_sq, trainer_state.json a global_step`);
  }
  return { optimizer: { m: m.data, v: v.data, step: state.global_step }, state };
}

/** Reads a checkpoint folder (config, weights, tokenizer and optimizer state when present). */
export async function loadCheckpoint(dir: string): Promise<LoadedCheckpoint> {
  requireFolder(dir, CHECKPOINT_FOLDER);
  const config = configFromHf(await readUserJson(join(dir, 'config.json'), `the model config of ${CHECKPOINT_FOLDER}`));
  const tensors = await readModelWeights(dir);
  const tokenizer = existsSync(join(dir, 'tokenizer.json')) ? await Tokenizer.fromFolder(dir) : undefined;
  const generationFile = join(dir, 'generation_config.json');
  const generation = existsSync(generationFile) ? await readUserJson(generationFile, 'the generation settings of a checkpoint') : undefined;
  if (generation != null && (typeof generation !== 'object' || Array.isArray(generation))) {
    throw new GrpoError('GRPO_DATA_FORMAT', `${generationFile}: expected a JSON object`);
  }
  return { config, tensors, tokenizer, optimizer: (await readOptimizer(dir))?.optimizer, ...(generation ? { generation: generation as Record<string, unknown> } : {}) };
}
