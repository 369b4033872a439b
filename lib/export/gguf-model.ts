// The built-in policy's config and tensors as llama.cpp's GGUF model: general.architecture and the {arch}.*
// hyperparameters (key names of gguf-py/gguf/constants.py, Keys.LLM / Attention / Rope), and the tensor names of
// constants.py's MODEL_TENSORS (token_embd, blk.N.attn_q …, output_norm, output) that convert_hf_to_gguf.py
// maps the Hugging Face names to. LlamaForCausalLM and MistralForCausalLM become "llama", Qwen2ForCausalLM "qwen2",
// Qwen3ForCausalLM "qwen3" (the converter's LlamaModel, Qwen2Model and Qwen3Model).
//
// RoPE layout: the built-in model (native/model/rope.cc) rotates the halves of each head, (x[i], x[i + d/2]), as
// transformers does. llama.cpp runs "qwen2"/"qwen3" with that NEOX layout but "llama" with adjacent pairs
// (x[2i], x[2i + 1]) (llama_model_rope_type in src/llama-model.cpp), so for "llama" the rows of each q_proj head
// (and k_proj head) are permuted as the converter's LlamaModel.permute does: row j·d/2 + i of a head moves to
// 2i + j. The scores are the same; only the storage order of the head's rows changes.
import { GrpoError } from '../errors.js';
import type { ModelConfig, SupportedArchitecture } from '../policy/config.js';
import type { NamedTensor } from '../policy/safetensors.js';
import type { GgufTensor, GgufTensorType, GgufValue } from './gguf-file.js';

export type GgufArchitecture = 'llama' | 'qwen2' | 'qwen3';

const ARCHITECTURES: Record<SupportedArchitecture, GgufArchitecture> = {
  LlamaForCausalLM: 'llama', MistralForCausalLM: 'llama', Qwen2ForCausalLM: 'qwen2', Qwen3ForCausalLM: 'qwen3',
};

/** The GGUF architecture of a config. */
export function ggufArchitecture(c: ModelConfig): GgufArchitecture {
  return ARCHITECTURES[c.architecture];
}

const u32 = (value: number): GgufValue => ({ type: 'uint32', value });
const f32 = (value: number): GgufValue => ({ type: 'float32', value });

/** RoPE scaling keys: linear as {arch}.rope.scaling.*; dynamic runs as plain RoPE here (as in the built-in model). */
function ropeScalingKeys(c: ModelConfig, arch: GgufArchitecture): [string, GgufValue][] {
  const s = c.ropeScaling;
  if (!s || s.type === 'dynamic') return [];
  if (s.type === 'linear') return [[`${arch}.rope.scaling.type`, { type: 'string', value: 'linear' }], [`${arch}.rope.scaling.factor`, f32(s.factor)]];
  throw new GrpoError('GRPO_UNSUPPORTED', `GGUF export: rope_scaling type "${s.type}" is not exported yet (plain, linear and dynamic RoPE are)`);
}

/** The {arch}.* hyperparameters llama.cpp reads for these architectures (llm_load_hparams). */
export function hyperparameters(c: ModelConfig): [string, GgufValue][] {
  const arch = ggufArchitecture(c);
  return [
    [`${arch}.vocab_size`, u32(c.vocabSize)],
    [`${arch}.context_length`, u32(c.maxPositions)],
    [`${arch}.embedding_length`, u32(c.hiddenSize)],
    [`${arch}.block_count`, u32(c.numLayers)],
    [`${arch}.feed_forward_length`, u32(c.intermediateSize)],
    [`${arch}.attention.head_count`, u32(c.numHeads)],
    [`${arch}.attention.head_count_kv`, u32(c.numKvHeads)],
    [`${arch}.attention.key_length`, u32(c.headDim)],
    [`${arch}.attention.value_length`, u32(c.headDim)],
    [`${arch}.attention.layer_norm_rms_epsilon`, f32(c.rmsNormEps)],
    [`${arch}.rope.dimension_count`, u32(c.headDim)],
    [`${arch}.rope.freq_base`, f32(c.ropeTheta)],
    ...ropeScalingKeys(c, arch),
  ];
}

/** Hugging Face layer tensor → its GGUF name after blk.N. */
const LAYER_NAMES: Record<string, string> = {
  'input_layernorm.weight': 'attn_norm.weight',
  'post_attention_layernorm.weight': 'ffn_norm.weight',
  'self_attn.q_proj.weight': 'attn_q.weight',
  'self_attn.q_proj.bias': 'attn_q.bias',
  'self_attn.k_proj.weight': 'attn_k.weight',
  'self_attn.k_proj.bias': 'attn_k.bias',
  'self_attn.v_proj.weight': 'attn_v.weight',
  'self_attn.v_proj.bias': 'attn_v.bias',
  'self_attn.o_proj.weight': 'attn_output.weight',
  'self_attn.q_norm.weight': 'attn_q_norm.weight',
  'self_attn.k_norm.weight': 'attn_k_norm.weight',
  'mlp.gate_proj.weight': 'ffn_gate.weight',
  'mlp.up_proj.weight': 'ffn_up.weight',
  'mlp.down_proj.weight': 'ffn_down.weight',
};
const TOP_NAMES: Record<string, string> = {
  'model.embed_tokens.weight': 'token_embd.weight',
  'model.norm.weight': 'output_norm.weight',
  'lm_head.weight': 'output.weight',
};

/** The GGUF name of a Hugging Face tensor name. */
export function ggufTensorName(name: string): string {
  const top = TOP_NAMES[name];
  if (top) return top;
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(name);
  const layer = m && LAYER_NAMES[m[2]];
  if (!m || !layer) throw new GrpoError('GRPO_UNSUPPORTED', `GGUF export: no GGUF name for tensor "${name}"`);
  return `blk.${m[1]}.${layer}`;
}

/** Rows of each head of a [heads·d, …] tensor from the half-split order to the pair-interleaved one (llama's RoPE). */
export function interleaveHeadRows(data: Float32Array, heads: number, columns: number): Float32Array {
  const d = data.length / heads / columns, half = d / 2, out = new Float32Array(data.length);
  for (let h = 0; h < heads; h++) {
    for (let j = 0; j < 2; j++) {
      for (let i = 0; i < half; i++) {
        const from = (h * d + j * half + i) * columns, to = (h * d + 2 * i + j) * columns;
        out.set(data.subarray(from, from + columns), to);
      }
    }
  }
  return out;
}

/** The heads whose rows `name` stores for llama's layout (q: numHeads, k: numKvHeads), or 0 when it keeps its order. */
function permutedHeads(name: string, c: ModelConfig): number {
  if (ggufArchitecture(c) !== 'llama') return 0;
  if (/\.self_attn\.q_proj\.(weight|bias)$/.test(name)) return c.numHeads;
  if (/\.self_attn\.k_proj\.(weight|bias)$/.test(name)) return c.numKvHeads;
  return 0;
}

/**
 * The GGUF tensors of a model: renamed, q/k rows permuted for llama, dims reversed (ne[0] = the row length), 1-D
 * tensors (norms, biases) kept in F32 as the converter keeps them, matrices in `dtype`. A tied lm_head is left out:
 * llama.cpp uses token_embd for the output when output.weight is absent.
 */
export function ggufTensors(c: ModelConfig, tensors: readonly NamedTensor[], dtype: GgufTensorType): GgufTensor[] {
  return tensors
    .filter((t) => !(c.tieEmbeddings && t.name === 'lm_head.weight'))
    .map((t) => {
      const heads = permutedHeads(t.name, c), columns = t.shape.length > 1 ? t.shape[1] : 1;
      const data = heads > 0 ? interleaveHeadRows(t.data, heads, columns) : t.data;
      return { name: ggufTensorName(t.name), dims: [...t.shape].reverse(), type: t.shape.length === 1 ? 'F32' : dtype, data };
    });
}
