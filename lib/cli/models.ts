// Policies for the command line: load a checkpoint folder, or create the built-in demo model (a small
// Llama-family decoder from scratch) with a byte-level BPE trained on the bundled corpora.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Device } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import type { LoraStartOptions, LoraStartSettings } from '../options/lora.js';
import { BuiltinPolicy } from '../policy/builtin.js';
import { ADAPTER_CONFIG_FILE } from '../policy/lora-format.js';
import type { ModelConfig } from '../policy/config.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import type { ConfigInput, DataConfig } from '../trainer/config.js';
import { arithmeticExamples, recommendExamples } from '../trainer/sft.js';
import { moviesData } from '../trainer/tasks.js';
import { trainBpe } from './bpe.js';

/** Model sizes of the demo: `demo` (≈ 1.5 M parameters) and `quick` (a test-sized one). */
export const DEMO_MODELS: Readonly<Record<'demo' | 'quick', Omit<ModelConfig, 'vocabSize'>>> = Object.freeze({
  demo: {
    hiddenSize: 128, intermediateSize: 352, numLayers: 4, numHeads: 4, numKvHeads: 2, headDim: 32, maxPositions: 512,
    rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
  },
  quick: {
    hiddenSize: 64, intermediateSize: 176, numLayers: 2, numHeads: 2, numKvHeads: 1, headDim: 32, maxPositions: 512,
    rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
  },
});

/**
 * Loads a checkpoint folder written by `grpo sft`, `grpo train` or Policy.save (a LoRA run's: its adapter over the
 * base it names) onto `device`; with `lora`, a full folder becomes the frozen base of new adapters.
 */
export async function loadPolicy(dir: string, device: Device = 'cpu', lora?: LoraStartOptions | null): Promise<BuiltinPolicy> {
  if (!existsSync(join(dir, 'config.json')) && !existsSync(join(dir, ADAPTER_CONFIG_FILE))) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `No checkpoint at ${dir} (config.json is missing); pass a folder written by grpo sft or grpo train, e.g. runs/sft/policy`);
  }
  return BuiltinPolicy.load(dir, { device, ...(lora ? { lora } : {}) });
}

/**
 * The `lora` table a run loads its policy with: config.lora, or with `lora.from` only the fields the config `layers`
 * (file, flags) give, so that the rest are the adapter's and not the table's defaults.
 */
export function loraToLoad(lora: LoraStartSettings | null, layers: readonly ConfigInput[]): LoraStartOptions | null {
  if (lora?.from == null) return lora;
  const given = new Set(layers.flatMap((layer) => (layer.lora && typeof layer.lora === 'object' ? Object.keys(layer.lora) : [])));
  return Object.fromEntries(Object.entries(lora).filter(([key]) => given.has(key)));
}

/** A BPE of `vocabSize` tokens trained on the movie requests and lists and the arithmetic solutions the recipes use. */
export function demoTokenizer(vocabSize: number, data: DataConfig, ranks: number): Tokenizer {
  const examples = [...recommendExamples(moviesData(data.moviesDir), ranks), ...arithmeticExamples(data, [1, 3])];
  return trainBpe(examples.flatMap((e) => [e.prompt, e.target]), vocabSize);
}

/** A fresh demo model (weights from `seed`) over `tokenizer`, on `device`. */
export async function demoPolicy(size: 'demo' | 'quick', tokenizer: Tokenizer, seed: number, device: Device = 'cpu'): Promise<BuiltinPolicy> {
  return BuiltinPolicy.create({ ...DEMO_MODELS[size], vocabSize: tokenizer.vocabSize }, { seed, tokenizer, device });
}
