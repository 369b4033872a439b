// `grpo export --gguf`: a policy as one GGUF v3 file that llama.cpp loads. From a checkpoint folder (as
// Policy.save and `grpo sft`/`grpo train` write it), or from a LoRA run's adapter folder, merged into its base
// first (lora-merge.ts, into a temporary folder that is removed afterwards). The file is written beside its final
// name and renamed into place, so a crash never leaves a half-written model under that name.
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { GrpoError } from '../errors.js';
import { loadCheckpoint } from '../policy/checkpoint.js';
import type { ModelConfig } from '../policy/config.js';
import { isAdapterFolder } from '../policy/lora-checkpoint.js';
import { loadAdapter } from '../policy/lora-format.js';
import { adapterBaseFolder, mergeAdapter } from '../policy/lora-merge.js';
import type { NamedTensor } from '../policy/safetensors.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import { writeGguf, type GgufTensorType, type GgufValue } from './gguf-file.js';
import { ggufArchitecture, ggufTensors, hyperparameters } from './gguf-model.js';
import { tokenizerMetadata } from './gguf-tokenizer.js';

export type GgufDtype = 'f32' | 'f16' | 'bf16';
export const GGUF_DTYPES: readonly GgufDtype[] = ['f32', 'f16', 'bf16'];

/** general.file_type (gguf-py's LlamaFileType: ALL_F32, MOSTLY_F16, MOSTLY_BF16) and the matrices' tensor type. */
const FILE_TYPES: Record<GgufDtype, { fileType: number; tensor: GgufTensorType }> = {
  f32: { fileType: 0, tensor: 'F32' }, f16: { fileType: 1, tensor: 'F16' }, bf16: { fileType: 32, tensor: 'BF16' },
};

export interface GgufExportOptions {
  /** The matrices' storage type; norms and biases stay f32. @defaultValue 'f32' */
  dtype?: GgufDtype;
  /** general.name. @defaultValue the folder's name */
  name?: string;
}

/** A model in memory: what Policy.save writes, or a live policy's config, getTensors() and tokenizer. */
export interface GgufModel {
  config: ModelConfig;
  tensors: readonly NamedTensor[];
  tokenizer: Tokenizer | undefined;
}

function checkDtype(dtype: unknown): GgufDtype {
  if (!GGUF_DTYPES.includes(dtype as GgufDtype)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `GGUF export: dtype must be one of ${GGUF_DTYPES.join(', ')} but is ${JSON.stringify(dtype)}`);
  }
  return dtype as GgufDtype;
}

/** The key-values of a model's GGUF file, in the order written. */
export function ggufMetadata(model: GgufModel, options: GgufExportOptions = {}): Map<string, GgufValue> {
  if (!model.tokenizer) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'GGUF export needs the tokenizer (tokenizer.json beside the checkpoint): llama.cpp reads it from the file');
  const dtype = checkDtype(options.dtype ?? 'f32');
  return new Map<string, GgufValue>([
    ['general.architecture', { type: 'string', value: ggufArchitecture(model.config) }],
    ['general.name', { type: 'string', value: options.name ?? 'grpo-native policy' }],
    ['general.file_type', { type: 'uint32', value: FILE_TYPES[dtype].fileType }],
    ['general.quantization_version', { type: 'uint32', value: 2 }],
    ['general.alignment', { type: 'uint32', value: 32 }],
    ...hyperparameters(model.config),
    ...tokenizerMetadata(model.tokenizer, model.config.vocabSize),
  ]);
}

/** Writes `model` to `path` as GGUF (atomically: a sibling temporary file renamed into place). */
export async function writeModelGguf(path: string, model: GgufModel, options: GgufExportOptions = {}): Promise<void> {
  const metadata = ggufMetadata(model, options);
  const tensors = ggufTensors(model.config, model.tensors, FILE_TYPES[options.dtype ?? 'f32'].tensor);
  const temp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`);
  try {
    await writeGguf(temp, { metadata, tensors });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

export interface GgufExportResult {
  /** The checkpoint folder the weights came from (the merged temporary folder is gone by then). */
  source: string;
  /** Whether a LoRA adapter was merged into its base first. */
  merged: boolean;
  architecture: string;
  tensors: number;
}

/**
 * Exports a checkpoint folder (or an adapter folder, merged into the base its adapter_config.json names, or
 * `base` when given) to `path`.
 */
export async function exportGguf(policyDir: string, path: string, options: GgufExportOptions & { base?: string } = {}): Promise<GgufExportResult> {
  const { base, ...rest } = options;
  const name = rest.name ?? basename(resolve(policyDir));
  if (!isAdapterFolder(policyDir)) {
    if (base !== undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', `GGUF export: base is for an adapter folder, and ${policyDir} is a full checkpoint (it has config.json or no adapter_config.json)`);
    return exportFolder(policyDir, path, { ...rest, name }, false);
  }
  const baseDir = base ?? adapterBaseFolder(await loadAdapter(policyDir), policyDir);
  const temp = await mkdtemp(join(tmpdir(), 'grpo-gguf-merge-'));
  try {
    const merged = join(temp, 'merged');
    await mergeAdapter(baseDir, policyDir, merged);
    return { ...(await exportFolder(merged, path, { ...rest, name }, true)), source: policyDir };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

async function exportFolder(dir: string, path: string, options: GgufExportOptions, merged: boolean): Promise<GgufExportResult> {
  const { config, tensors, tokenizer } = await loadCheckpoint(dir);
  await writeModelGguf(path, { config, tensors, tokenizer }, options);
  const written = tensors.length - (config.tieEmbeddings && tensors.some((t) => t.name === 'lm_head.weight') ? 1 : 0);
  return { source: dir, merged, architecture: ggufArchitecture(config), tensors: written };
}
