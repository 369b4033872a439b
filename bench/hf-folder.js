// A Hugging Face model folder of a real checkpoint's shape with random weights, laid out as transformers'
// save_pretrained writes it: the checkpoint's own config.json and generation_config.json (test/fixtures/hf-configs),
// bf16 weights in model.safetensors (or shards of at most 5 GB and model.safetensors.index.json, its default
// max_shard_size), and a tokenizer: the real tokenizer files copied from a folder, or a synthetic byte-level BPE
// of the config's vocabulary size. Used by bench/hf-checkpoint.js; needs `npx tsc -p tsconfig.json`.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BuiltinPolicy, configFromHf, GrpoError, mulberry32, Tokenizer } from '../dist/index.js';
import { syntheticBpe } from '../dist/policy/bpe-train.js';
import { writeJsonFile, writeModelWeights } from '../dist/policy/safetensors.js';

const HF_CONFIGS = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'hf-configs');

/** The checkpoints whose real config.json and generation_config.json test/fixtures/hf-configs holds. */
export const SHAPES = Object.freeze({ 'qwen3-0.6b': 'Qwen/Qwen3-0.6B', 'qwen2.5-0.5b': 'Qwen/Qwen2.5-0.5B', 'llama-3.2-1b': 'meta-llama/Llama-3.2-1B' });

/** transformers' save_pretrained default max_shard_size, "5GB". */
export const HF_MAX_SHARD_BYTES = 5e9;

/** config.json torch_dtype → the safetensors dtype save_pretrained stores. */
const STORED = { bfloat16: 'BF16', float16: 'F16', float32: 'F32' };

/** The files of a tokenizer folder that save_pretrained writes and a copy takes along (the first two are needed). */
const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.json', 'merges.txt'];

/** { config, generation }: the parsed config.json and generation_config.json of `shape` (a key of SHAPES). */
export function realConfig(shape) {
  if (!Object.hasOwn(SHAPES, shape)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Unknown shape "${shape}"; expected one of ${Object.keys(SHAPES).join(', ')}`);
  }
  const read = (file) => JSON.parse(readFileSync(join(HF_CONFIGS, `${shape}.${file}`), 'utf8'));
  return { config: read('config.json'), generation: read('generation_config.json') };
}

/** Names and shapes of the checkpoint's tensors, as the built-in model lays them out (a throwaway model of the config). */
function tensorShapes(config) {
  const model = BuiltinPolicy.create(configFromHf(config));
  try {
    return model.tensorList();
  } finally {
    model.dispose();
  }
}

/**
 * Random tensors of the config, as transformers' _init_weights draws them: matrices and embeddings N(0, σ²) with σ the
 * config's initializer_range, RMSNorm weights 1, biases 0; sorted by name, the order safetensors stores them in.
 */
function randomTensors(config, seed) {
  const random = mulberry32(seed);
  const sigma = config.initializer_range ?? 0.02;
  return tensorShapes(config).sort((a, b) => (a.name < b.name ? -1 : 1)).map(({ name, shape }) => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    if (/norm\.weight$/.test(name)) data.fill(1);
    else if (!name.endsWith('.bias')) {
      for (let i = 0; i < data.length; i += 2) { // Box-Muller: two normal draws per pair of uniforms
        const radius = sigma * Math.sqrt(-2 * Math.log(1 - random())), angle = 2 * Math.PI * random();
        data[i] = radius * Math.cos(angle);
        if (i + 1 < data.length) data[i + 1] = radius * Math.sin(angle);
      }
    }
    return { name, shape, data };
  });
}

/** Copies the tokenizer files of `from`, or writes a synthetic byte-level BPE of `vocabSize` tokens. Returns its vocabulary size. */
async function writeTokenizer(dir, vocabSize, from) {
  if (from === undefined) {
    const { tokenizer, config } = syntheticBpe(vocabSize);
    await writeJsonFile(join(dir, 'tokenizer.json'), tokenizer);
    await writeJsonFile(join(dir, 'tokenizer_config.json'), config);
    return vocabSize;
  }
  for (const file of TOKENIZER_FILES.slice(0, 2)) {
    if (!existsSync(join(from, file))) throw new GrpoError('GRPO_INVALID_ARGUMENT', `--tokenizer ${from}: no ${file} there`);
  }
  const size = (await Tokenizer.fromFolder(from)).vocabSize;
  if (size > vocabSize) throw new GrpoError('GRPO_SHAPE_MISMATCH', `--tokenizer ${from}: ${size} tokens do not fit vocab_size ${vocabSize}`);
  for (const file of TOKENIZER_FILES) if (existsSync(join(from, file))) copyFileSync(join(from, file), join(dir, file));
  return size;
}

/**
 * Writes the folder `dir`: config.json and generation_config.json as given, random weights (seeded) stored in the
 * config's torch_dtype (bf16 for the three real ones), and the tokenizer of `tokenizerDir` (else synthetic). The
 * weights are drawn as float32 first: 4 bytes per parameter while it writes. Returns the weight files written and
 * the tokenizer's vocabulary size.
 */
export async function writeHfFolder(dir, { config, generation, tokenizerDir, seed = 0, maxShardBytes = HF_MAX_SHARD_BYTES }) {
  mkdirSync(dir, { recursive: true });
  await writeJsonFile(join(dir, 'config.json'), config);
  await writeJsonFile(join(dir, 'generation_config.json'), generation);
  const tokenizerSize = await writeTokenizer(dir, config.vocab_size, tokenizerDir);
  const files = await writeModelWeights(dir, randomTensors(config, seed), maxShardBytes, STORED[config.torch_dtype] ?? 'BF16');
  return { files, tokenizerSize };
}
