// The checkpoint of a policy trained with LoRA: the adapter in PEFT's format (lora-format.ts) and, for resuming, the
// adapters' AdamW state (optimizer.safetensors + trainer_state.json, as a full checkpoint has it, with the seed of
// the dropout masks beside global_step). The frozen base is not copied: adapter_config.json names its folder.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { GrpoError } from '../errors.js';
import { readOptimizer, writeFolderAtomically, writeOptimizer, type OptimizerState } from './checkpoint.js';
import type { ModelConfig } from './config.js';
import { ADAPTER_CONFIG_FILE, loadAdapter, writeAdapterFiles, type LoraAdapter } from './lora-format.js';

export interface LoraCheckpoint {
  adapter: LoraAdapter;
  optimizer?: OptimizerState;
  /** Keys the dropout masks (and keyed A's initialisation). */
  seed: number;
}

/** A folder holding an adapter and no model of its own (adapter_config.json without config.json). */
export function isAdapterFolder(dir: string): boolean {
  return existsSync(join(dir, ADAPTER_CONFIG_FILE)) && !existsSync(join(dir, 'config.json'));
}

/** Writes `dir` atomically: the adapter, and its optimizer state with the seed when given. */
export function saveLoraCheckpoint(dir: string, c: LoraCheckpoint): Promise<void> {
  return writeFolderAtomically(dir, async (temp) => {
    await writeAdapterFiles(temp, c.adapter, 'F32', dir);
    if (c.optimizer) await writeOptimizer(temp, c.optimizer, { lora_seed: c.seed });
  });
}

/** Reads an adapter folder (checked against the base's `config` when given) with its optimizer state when present. */
export async function loadLoraCheckpoint(dir: string, config?: ModelConfig): Promise<LoraCheckpoint> {
  const adapter = await loadAdapter(dir, config);
  const saved = await readOptimizer(dir);
  const seed = saved?.state.lora_seed ?? 0;
  if (!Number.isSafeInteger(seed) || (seed as number) < 0) {
    throw new GrpoError('GRPO_DATA_FORMAT', `${join(dir, 'trainer_state.json')}: "lora_seed" must be an integer >= 0 but is ${JSON.stringify(seed)}`);
  }
  return { adapter, optimizer: saved?.optimizer, seed: seed as number };
}
