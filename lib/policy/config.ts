// Model configuration: read from and written to a Hugging Face config.json (Llama / Qwen2 / Qwen3 / Mistral families).
import type { NativeModelConfig } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import { ropeScalingFromHf, ropeScalingToHf, ropeScalingToNative, type RopeScaling } from './rope-scaling.js';

export type { RopeScaling } from './rope-scaling.js';

/** Shape of a Llama/Qwen-family decoder. */
export interface ModelConfig {
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  /** Grouped-query attention: numHeads must be a multiple of it. */
  numKvHeads: number;
  /** @defaultValue hiddenSize / numHeads */
  headDim: number;
  maxPositions: number;
  /** @defaultValue 1e-6 */
  rmsNormEps: number;
  /** @defaultValue 10000 */
  ropeTheta: number;
  /** config.json "rope_scaling" (lib/policy/rope-scaling.ts). @defaultValue none: plain RoPE */
  ropeScaling?: RopeScaling;
  tieEmbeddings: boolean;
  /** Bias on the q/k/v projections (Qwen2's layout: architecture Qwen2ForCausalLM). */
  attentionBias: boolean;
  /** RMSNorm over head_dim on each query and key head before RoPE (Qwen3). @defaultValue false */
  qkNorm?: boolean;
  /** Written to config.json "architectures". @defaultValue 'LlamaForCausalLM' (or Qwen2 with attentionBias) */
  architecture: SupportedArchitecture;
}

export const SUPPORTED_ARCHITECTURES = ['LlamaForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM', 'MistralForCausalLM'] as const;
export type SupportedArchitecture = (typeof SUPPORTED_ARCHITECTURES)[number];

type Json = Record<string, unknown>;

const MODEL_TYPES: Record<SupportedArchitecture, string> = {
  LlamaForCausalLM: 'llama', Qwen2ForCausalLM: 'qwen2', Qwen3ForCausalLM: 'qwen3', MistralForCausalLM: 'mistral',
};

function field(json: Json, key: string, fallback?: number): number {
  const value = json[key] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new GrpoError('GRPO_DATA_FORMAT', `config.json: expected a number for "${key}" but received ${JSON.stringify(json[key])}`);
  }
  return value;
}

function architectureOf(json: Json): SupportedArchitecture {
  const list = json.architectures;
  const name = Array.isArray(list) && typeof list[0] === 'string' ? list[0] : undefined;
  if (name === undefined) {
    const type = json.model_type;
    const found = Object.entries(MODEL_TYPES).find(([, t]) => t === type);
    if (found) return found[0] as SupportedArchitecture;
  }
  if (!SUPPORTED_ARCHITECTURES.includes(name as SupportedArchitecture)) {
    throw new GrpoError('GRPO_UNSUPPORTED',
      `config.json: architecture ${JSON.stringify(name ?? json.model_type)} is not supported; expected one of ${SUPPORTED_ARCHITECTURES.join(', ')}`);
  }
  return name as SupportedArchitecture;
}

const unsupported = (what: string) => new GrpoError('GRPO_UNSUPPORTED', `config.json: ${what}`);

/** The weight dtypes a checkpoint may declare: each is widened to float32 on load. */
const DTYPES = ['float32', 'bfloat16', 'float16'];

/** Sliding-window attention: Qwen2/Qwen3 gate it with use_sliding_window (and layer_types); Mistral applies sliding_window. */
function rejectSlidingWindow(json: Json, architecture: SupportedArchitecture): void {
  if (json.use_sliding_window === true) throw unsupported('use_sliding_window = true is not supported (full causal attention only)');
  const layers = json.layer_types;
  if (Array.isArray(layers) && layers.some((type) => type !== 'full_attention')) {
    throw unsupported(`layer_types ${JSON.stringify([...new Set(layers)])} is not supported (every layer "full_attention" only)`);
  }
  const window = json.sliding_window, gated = architecture === 'Qwen2ForCausalLM' || architecture === 'Qwen3ForCausalLM';
  if (!gated && typeof window === 'number' && window < field(json, 'max_position_embeddings')) {
    throw unsupported(`sliding_window = ${window} is not supported (full causal attention only; it is below max_position_embeddings)`);
  }
}

function rejectUnsupported(json: Json, architecture: SupportedArchitecture): void {
  const act = json.hidden_act ?? 'silu';
  if (act !== 'silu') throw unsupported(`hidden_act "${String(act)}" is not supported (silu only)`);
  if (json.mlp_bias === true) throw unsupported('mlp_bias = true is not supported');
  const dtype = json.torch_dtype ?? json.dtype;
  if (dtype != null && !DTYPES.includes(dtype as string)) throw unsupported(`torch_dtype ${JSON.stringify(dtype)} is not supported; expected one of ${DTYPES.join(', ')}`);
  if (json.partial_rotary_factor != null && json.partial_rotary_factor !== 1) {
    throw unsupported(`partial_rotary_factor = ${JSON.stringify(json.partial_rotary_factor)} is not supported (RoPE over the whole head only)`);
  }
  if (json.attention_dropout != null && json.attention_dropout !== 0) {
    throw unsupported(`attention_dropout = ${JSON.stringify(json.attention_dropout)} is not supported (no dropout)`);
  }
  rejectSlidingWindow(json, architecture);
  // transformers' Llama and Qwen3 attention put attention_bias on o_proj too (modeling_llama.py 210-221); Qwen2 biases
  // q/k/v only, whatever the field says; Mistral never biases.
  if (json.attention_bias === true && (architecture === 'LlamaForCausalLM' || architecture === 'Qwen3ForCausalLM')) {
    throw unsupported(`attention_bias = true is not supported for ${architecture} (it adds an o_proj bias the built-in model lacks)`);
  }
}

/** transformers 5 folds rope_theta and rope_scaling into rope_parameters; earlier configs keep them apart. */
function ropeFields(json: Json): { theta: unknown; scaling: unknown } {
  const p = json.rope_parameters;
  if (p === null || typeof p !== 'object' || Array.isArray(p) || json.rope_scaling !== undefined) return { theta: json.rope_theta, scaling: json.rope_scaling };
  const { rope_theta: theta, ...scaling } = p as Json;
  return { theta: json.rope_theta ?? theta, scaling };
}

/** Reads a parsed Hugging Face config.json; unsupported architectures or options throw GRPO_UNSUPPORTED. */
export function configFromHf(json: unknown): ModelConfig {
  if (json === null || typeof json !== 'object') throw new GrpoError('GRPO_DATA_FORMAT', 'config.json: expected a JSON object');
  const j = json as Json;
  const architecture = architectureOf(j);
  rejectUnsupported(j, architecture);
  const hiddenSize = field(j, 'hidden_size'), numHeads = field(j, 'num_attention_heads');
  const maxPositions = field(j, 'max_position_embeddings'), rope = ropeFields(j);
  const ropeScaling = ropeScalingFromHf(rope.scaling, maxPositions);
  return checkConfig({
    vocabSize: field(j, 'vocab_size'),
    hiddenSize,
    intermediateSize: field(j, 'intermediate_size'),
    numLayers: field(j, 'num_hidden_layers'),
    numHeads,
    numKvHeads: field(j, 'num_key_value_heads', numHeads),
    headDim: field(j, 'head_dim', hiddenSize / numHeads),
    maxPositions,
    rmsNormEps: field(j, 'rms_norm_eps', 1e-6),
    ropeTheta: field({ rope_theta: rope.theta }, 'rope_theta', 10000),
    ...(ropeScaling ? { ropeScaling } : {}),
    tieEmbeddings: j.tie_word_embeddings === true,
    attentionBias: architecture === 'Qwen2ForCausalLM',
    ...(architecture === 'Qwen3ForCausalLM' ? { qkNorm: true } : {}),
    architecture,
  });
}

/** The config.json a Hugging Face loader reads back into the same model. */
export function configToHf(c: ModelConfig): Json {
  return {
    architectures: [c.architecture],
    model_type: MODEL_TYPES[c.architecture],
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    intermediate_size: c.intermediateSize,
    num_hidden_layers: c.numLayers,
    num_attention_heads: c.numHeads,
    num_key_value_heads: c.numKvHeads,
    head_dim: c.headDim,
    max_position_embeddings: c.maxPositions,
    rms_norm_eps: c.rmsNormEps,
    rope_theta: c.ropeTheta,
    rope_scaling: c.ropeScaling ? ropeScalingToHf(c.ropeScaling) : null,
    tie_word_embeddings: c.tieEmbeddings,
    attention_bias: c.attentionBias,
    hidden_act: 'silu',
    torch_dtype: 'float32',
  };
}

const INTEGER_FIELDS = ['vocabSize', 'hiddenSize', 'intermediateSize', 'numLayers', 'numHeads', 'numKvHeads', 'headDim', 'maxPositions'] as const;

/** Checks a config's fields (typed errors naming the field); returns it. */
export function checkConfig(c: ModelConfig): ModelConfig {
  for (const key of INTEGER_FIELDS) {
    if (!Number.isInteger(c[key]) || c[key] < 1) {
      throw new GrpoError('GRPO_VALUE_RANGE', `Expected config.${key} to be a positive integer but received ${String(c[key])}`);
    }
  }
  if (c.numHeads % c.numKvHeads !== 0) {
    throw new GrpoError('GRPO_VALUE_RANGE', `Expected config.numHeads (${c.numHeads}) to be a multiple of numKvHeads (${c.numKvHeads})`);
  }
  if (c.attentionBias && c.architecture !== 'Qwen2ForCausalLM') {
    throw new GrpoError('GRPO_UNSUPPORTED', `config.attentionBias (q/k/v biases, no o_proj bias) is the Qwen2ForCausalLM layout (got ${c.architecture})`);
  }
  if (c.qkNorm && c.architecture !== 'Qwen3ForCausalLM') {
    throw new GrpoError('GRPO_UNSUPPORTED', `config.qkNorm needs architecture Qwen3ForCausalLM (got ${c.architecture})`);
  }
  if (c.headDim % 2 !== 0) throw new GrpoError('GRPO_VALUE_RANGE', `Expected config.headDim to be even but received ${c.headDim}`);
  if (!(c.rmsNormEps > 0)) throw new GrpoError('GRPO_VALUE_RANGE', `Expected config.rmsNormEps > 0 but received ${c.rmsNormEps}`);
  if (!(c.ropeTheta > 1)) throw new GrpoError('GRPO_VALUE_RANGE', `Expected config.ropeTheta > 1 but received ${c.ropeTheta}`);
  // the native model checks the rest of ropeScaling; dynamic never reaches it (it runs as plain RoPE)
  if (c.ropeScaling && !(c.ropeScaling.factor >= 1)) {
    throw new GrpoError('GRPO_VALUE_RANGE', `Expected config.ropeScaling.factor >= 1 but received ${c.ropeScaling.factor}`);
  }
  return c;
}

/** The config as native/addon/model_addon.cc reads it into grpo_model_config (by field name). */
export function configToNative(c: ModelConfig): NativeModelConfig {
  return {
    vocabSize: c.vocabSize, hiddenSize: c.hiddenSize, intermediateSize: c.intermediateSize, numLayers: c.numLayers, numHeads: c.numHeads,
    numKvHeads: c.numKvHeads, headDim: c.headDim, maxPositions: c.maxPositions, rmsNormEps: c.rmsNormEps, ropeTheta: c.ropeTheta,
    tieEmbeddings: c.tieEmbeddings, attentionBias: c.attentionBias, qkNorm: c.qkNorm ?? false, ropeScaling: ropeScalingToNative(c.ropeScaling),
  };
}
