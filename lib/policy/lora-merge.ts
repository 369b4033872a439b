// Merging a LoRA adapter into its base: W' = W + scale · B·A for every target module (scale = alpha / r, or
// alpha / √r with rslora), as PEFT's merge_and_unload does (get_delta_weight, peft/src/peft/tuners/lora/layer.py
// lines 1005-1028). The sum is taken in float64 from the base weight widened to float32 and rounded once to the
// base's dtype (PEFT on a bf16 base rounds B·A to bf16 before adding it). The output is a full Hugging Face folder:
// the base's weight files rewritten tensor by tensor (same names, dtypes, shards and index; one tensor in memory
// at a time), its config.json, generation_config.json and tokenizer files copied.
import { existsSync, statSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { GrpoError } from '../errors.js';
import { loraScale } from '../options/lora.js';
import { readUserJson, requireFolder } from '../user-files.js';
import { writeFolderAtomically } from './checkpoint.js';
import { configFromHf } from './config.js';
import { loadAdapter, loraPairs, type LoraAdapter } from './lora-format.js';
import { fromFloat32, INDEX_FILE, readShardIndex, rewriteSafetensors, toFloat32, type StoredTensor } from './safetensors.js';

/** The files of a Hugging Face folder besides its weights that a merged folder keeps as they are. */
export const COPIED_FILES = [
  'config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'added_tokens.json',
  'vocab.json', 'merges.txt', 'tokenizer.model', 'chat_template.jinja', 'chat_template.json',
];

export interface MergeOptions {
  /** Called after each merged tensor: how many of `total` are done and the tensor's name. */
  onProgress?: (done: number, total: number, name: string) => void;
}

export interface MergeResult {
  /** The base weights updated (one per target module per layer). */
  merged: number;
  /** The files written into the output folder. */
  files: string[];
}

/** Multiply-adds between two yields to the event loop while a large weight merges. */
const CHUNK = 1 << 22;
const yieldToEventLoop = () => new Promise<void>((done) => setImmediate(done));

/** W [out, in] += scale · B [out, r] · A [r, in], row by row, each row summed in float64 and rounded once. */
async function addLowRank(w: Float32Array, a: Float32Array, b: Float32Array, rank: number, scale: number): Promise<void> {
  const inner = a.length / rank, out = b.length / rank, row = new Float64Array(inner);
  let work = 0;
  for (let o = 0; o < out; o++) {
    row.fill(0);
    for (let k = 0; k < rank; k++) {
      const coefficient = b[o * rank + k], offset = k * inner;
      for (let i = 0; i < inner; i++) row[i] += coefficient * a[offset + i];
    }
    for (let i = 0; i < inner; i++) w[o * inner + i] += scale * row[i];
    work += rank * inner;
    if (work >= CHUNK) {
      work = 0;
      await yieldToEventLoop();
    }
  }
}

/** The base folder an adapter names in base_model_name_or_path, when that is a local folder. */
export function adapterBaseFolder(adapter: Pick<LoraAdapter, 'baseModel'>, adapterDir: string): string {
  const base = adapter.baseModel;
  if (base && existsSync(base) && statSync(base).isDirectory()) return base;
  const named = base ? `names base_model_name_or_path ${JSON.stringify(base)}, which is not a local folder` : 'names no base_model_name_or_path';
  throw new GrpoError('GRPO_INVALID_ARGUMENT', `${join(adapterDir, 'adapter_config.json')} ${named}: give the base model's Hugging Face folder`);
}

/**
 * Writes `outDir` (atomically): the base folder `baseDir` with the adapter of `adapterDir` merged into its weights.
 * The adapter is checked against the base's config.json first (every tensor and shape, its r).
 */
export async function mergeAdapter(baseDir: string, adapterDir: string, outDir: string, options: MergeOptions = {}): Promise<MergeResult> {
  requireFolder(baseDir, 'the base model: a Hugging Face folder with config.json and model.safetensors');
  for (const [dir, what] of [[baseDir, 'base'], [adapterDir, 'adapter']]) {
    if (resolve(dir) === resolve(outDir)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `The merged folder ${outDir} would replace the ${what} folder; choose another --out`);
  }
  const config = configFromHf(await readUserJson(join(baseDir, 'config.json'), 'the model config of the base model\'s Hugging Face folder'));
  const adapter = await loadAdapter(adapterDir, config);
  const tensors = new Map(adapter.tensors.map((t) => [t.name, t.data]));
  const pairs = new Map(loraPairs(config.numLayers, adapter.settings.targetModules).map((p) => [p.weight, p]));
  const scale = loraScale(adapter.settings), rank = adapter.settings.rank, total = pairs.size;
  let merged = 0;
  const replace = async (t: StoredTensor): Promise<Buffer | undefined> => {
    const pair = pairs.get(t.name);
    if (!pair) return undefined;
    const a = tensors.get(pair.a)!, b = tensors.get(pair.b)!, inner = a.length / rank, out = b.length / rank;
    if (t.shape.join() !== `${out},${inner}`) {
      throw new GrpoError('GRPO_SHAPE_MISMATCH', `${baseDir}: tensor "${t.name}" has shape [${t.shape}] but the adapter updates [${out}, ${inner}]`);
    }
    const w = toFloat32(t.bytes, t.dtype, out * inner);
    await addLowRank(w, a, b, rank, scale);
    pairs.delete(t.name);
    merged += 1;
    options.onProgress?.(merged, total, t.name);
    return fromFloat32(w, t.dtype);
  };
  const shards = (await readShardIndex(baseDir)) ?? ['model.safetensors'];
  const copied = [INDEX_FILE, ...COPIED_FILES].filter((f) => existsSync(join(baseDir, f)));
  await writeFolderAtomically(outDir, async (temp) => {
    for (const shard of shards) await rewriteSafetensors(join(baseDir, shard), join(temp, shard), replace);
    const missing = pairs.keys().next();
    if (!missing.done) throw new GrpoError('GRPO_DATA_FORMAT', `${baseDir}: the base has no tensor "${missing.value}" for the adapter to update`);
    for (const file of copied) await copyFile(join(baseDir, file), join(temp, file));
  });
  return { merged, files: [...shards, ...copied] };
}
