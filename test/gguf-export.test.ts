// GGUF export: every key and tensor read back from the file (lib/export/gguf-read.ts) against what was exported,
// for llama (q/k rows interleaved for its RoPE layout), qwen2 (biases) and qwen3 (q/k norms), in f32, f16 and bf16;
// the head-row permutation checked against RoPE itself (rotate-half on the original rows equals adjacent-pair
// rotation on the permuted rows); the tokenizer metadata; a LoRA adapter merged first; `grpo export`; typed errors.
// Whether llama.cpp computes the same distribution from the file is scripts/gguf-llama-check.js (a real engine).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../lib/cli/main.js';
import { GrpoError } from '../lib/errors.js';
import { exportGguf, ggufMetadata, writeModelGguf, type GgufDtype } from '../lib/export/gguf-export.js';
import { writeGguf, type GgufValue } from '../lib/export/gguf-file.js';
import { interleaveHeadRows } from '../lib/export/gguf-model.js';
import { readGgufHeader, readGgufTensor } from '../lib/export/gguf-read.js';
import { preTokenizerName } from '../lib/export/gguf-tokenizer.js';
import { LORA_DEFAULTS } from '../lib/options/lora.js';
import { trainBpe } from '../lib/policy/bpe-train.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { loadCheckpoint } from '../lib/policy/checkpoint.js';
import type { ModelConfig, SupportedArchitecture } from '../lib/policy/config.js';
import { loraTensorShapes, saveAdapter } from '../lib/policy/lora-format.js';
import { mergeAdapter } from '../lib/policy/lora-merge.js';
import { fromFloat32, toFloat32, type NamedTensor } from '../lib/policy/safetensors.js';
import { Tokenizer } from '../lib/policy/tokenizer.js';
import { capture } from './helpers/capture.js';
import { randomNormal } from './helpers/random.js';

afterEach(() => vi.restoreAllMocks());

const scratch = () => mkdtempSync(join(tmpdir(), 'grpo-gguf-'));

function tokenizer(): Tokenizer {
  const { tokenizer: json, config } = trainBpe(['the cat sat on the mat', 'an answer: 42, then 17.'], { vocabSize: 280, specialTokens: ['<|endoftext|>', '<|im_start|>', '<|im_end|>'], minFrequency: 1 });
  return new Tokenizer(json, { ...config, bos_token: '<|endoftext|>' });
}

function config(architecture: SupportedArchitecture): ModelConfig {
  return {
    vocabSize: 300, hiddenSize: 32, intermediateSize: 40, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 8, maxPositions: 64,
    rmsNormEps: 1e-5, ropeTheta: 5e5, tieEmbeddings: architecture === 'LlamaForCausalLM', attentionBias: architecture === 'Qwen2ForCausalLM',
    ...(architecture === 'Qwen3ForCausalLM' ? { qkNorm: true } : {}), architecture,
  };
}

/** A saved checkpoint of `architecture` with random weights; its tensors as saved. */
async function checkpoint(architecture: SupportedArchitecture, dir: string): Promise<NamedTensor[]> {
  const policy = BuiltinPolicy.create(config(architecture), { seed: 3, tokenizer: tokenizer() });
  await policy.save(dir);
  const tensors = policy.getTensors();
  policy.dispose();
  return tensors;
}

/** The inverse of interleaveHeadRows: row 2i + j of a head back to j·d/2 + i. */
function splitHeadRows(data: Float32Array, heads: number, columns: number): Float32Array {
  const d = data.length / heads / columns, half = d / 2, out = new Float32Array(data.length);
  for (let h = 0; h < heads; h++) {
    for (let r = 0; r < d; r++) {
      const from = (h * d + r) * columns, to = (h * d + (r % 2) * half + Math.floor(r / 2)) * columns;
      out.set(data.subarray(from, from + columns), to);
    }
  }
  return out;
}

const GGUF_NAMES: [RegExp, string][] = [
  [/^model\.embed_tokens\.weight$/, 'token_embd.weight'], [/^model\.norm\.weight$/, 'output_norm.weight'], [/^lm_head\.weight$/, 'output.weight'],
  [/^model\.layers\.(\d+)\.input_layernorm\.weight$/, 'blk.$1.attn_norm.weight'], [/^model\.layers\.(\d+)\.post_attention_layernorm\.weight$/, 'blk.$1.ffn_norm.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.([qkv])_proj\.(weight|bias)$/, 'blk.$1.attn_$2.$3'], [/^model\.layers\.(\d+)\.self_attn\.o_proj\.weight$/, 'blk.$1.attn_output.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.([qk])_norm\.weight$/, 'blk.$1.attn_$2_norm.weight'], [/^model\.layers\.(\d+)\.mlp\.(gate|up|down)_proj\.weight$/, 'blk.$1.ffn_$2.weight'],
];
const ggufName = (name: string) => {
  const rule = GGUF_NAMES.find(([re]) => re.test(name));
  if (!rule) throw new Error(`no rule for ${name}`);
  return name.replace(rule[0], rule[1]);
};

/** Metadata as a file holds it: float32 values rounded to float32. */
const asStored = (m: Map<string, GgufValue>) =>
  new Map([...m].map(([k, v]) => [k, v.type === 'float32' ? { ...v, value: Math.fround(v.value as number) } : v]));

const rounded = (data: Float32Array, dtype: GgufDtype) => (dtype === 'f32' ? data : toFloat32(fromFloat32(data, dtype === 'f16' ? 'F16' : 'BF16'), dtype === 'f16' ? 'F16' : 'BF16', data.length));

describe('GGUF export round trip', () => {
  const cases: [SupportedArchitecture, string, GgufDtype][] = [
    ['LlamaForCausalLM', 'llama', 'f32'], ['LlamaForCausalLM', 'llama', 'bf16'], ['Qwen2ForCausalLM', 'qwen2', 'f16'], ['Qwen3ForCausalLM', 'qwen3', 'f32'],
  ];
  it.each(cases)('%s → %s (%s): every key and every tensor read back', async (architecture, arch, dtype) => {
    const dir = scratch(), out = join(dir, 'model.gguf');
    const tensors = await checkpoint(architecture, join(dir, 'policy'));
    const result = await exportGguf(join(dir, 'policy'), out, { dtype });
    const c = config(architecture);
    expect(result).toMatchObject({ architecture: arch, merged: false });

    const header = await readGgufHeader(out);
    const loaded = await loadCheckpoint(join(dir, 'policy'));
    expect(header.version).toBe(3);
    expect(header.alignment).toBe(32);
    expect(header.metadata).toEqual(asStored(ggufMetadata({ ...loaded }, { dtype, name: 'policy' })));
    const get = (key: string) => header.metadata.get(key) as { value: unknown } | undefined;
    expect(get('general.architecture')?.value).toBe(arch);
    expect(get(`${arch}.block_count`)?.value).toBe(2);
    expect(get(`${arch}.attention.head_count_kv`)?.value).toBe(2);
    expect(get(`${arch}.rope.freq_base`)?.value).toBe(5e5);
    expect(get(`${arch}.attention.layer_norm_rms_epsilon`)?.value).toBeCloseTo(1e-5, 10);
    expect(get('general.file_type')?.value).toBe({ f32: 0, f16: 1, bf16: 32 }[dtype]);

    const expected = tensors.filter((t) => !(c.tieEmbeddings && t.name === 'lm_head.weight'));
    expect(header.tensors.map((t) => t.name).sort()).toEqual(expected.map((t) => ggufName(t.name)).sort());
    for (const t of expected) {
      const info = header.tensors.find((i) => i.name === ggufName(t.name))!;
      expect(info.dims).toEqual([...t.shape].reverse());
      expect(info.type).toBe(t.shape.length === 1 ? 'F32' : dtype.toUpperCase());
      expect(info.offset % 32).toBe(0);
      let data = await readGgufTensor(out, header, info.name);
      const heads = arch === 'llama' ? (/q_proj/.test(t.name) ? c.numHeads : /k_proj/.test(t.name) ? c.numKvHeads : 0) : 0;
      if (heads > 0) data = splitHeadRows(data, heads, t.shape[1]);
      expect(data).toEqual(t.shape.length === 1 ? t.data : rounded(t.data, dtype));
    }
  });

  it('llama q/k rows: adjacent-pair RoPE on the permuted rows is rotate-half RoPE on the original ones, permuted', () => {
    const heads = 3, d = 8, columns = 5, position = 7, theta = 10000;
    const w = randomNormal(heads * d * columns, 1, 11), x = randomNormal(columns, 1, 12);
    const project = (m: Float32Array) => Float64Array.from({ length: heads * d }, (_, r) => x.reduce((s, v, k) => s + m[r * columns + k] * v, 0));
    const angle = (i: number) => position / theta ** ((2 * i) / d);
    const rotateHalf = (q: Float64Array) => q.map((_, r) => {
      const h = Math.floor(r / d), i = r % d, half = d / 2, base = h * d;
      const k = i % half, a = q[base + k], b = q[base + k + half], c = Math.cos(angle(k)), s = Math.sin(angle(k));
      return i < half ? a * c - b * s : b * c + a * s;
    });
    const rotatePairs = (q: Float64Array) => q.map((_, r) => {
      const h = Math.floor(r / d), i = r % d, base = h * d, k = Math.floor(i / 2);
      const a = q[base + 2 * k], b = q[base + 2 * k + 1], c = Math.cos(angle(k)), s = Math.sin(angle(k));
      return i % 2 === 0 ? a * c - b * s : b * c + a * s;
    });
    const viaHf = interleaveHeadRows(Float32Array.from(rotateHalf(project(w))), heads, 1);
    const viaGguf = rotatePairs(project(interleaveHeadRows(w, heads, columns)));
    for (let r = 0; r < heads * d; r++) expect(viaGguf[r]).toBeCloseTo(viaHf[r], 5);
    // and the permutation is not the identity
    expect(interleaveHeadRows(w, heads, columns)).not.toEqual(w);
  });
});

describe('GGUF tokenizer metadata', () => {
  it('lists the tokens by id with their types, the merges, bos/eos and the pre-tokenizer', () => {
    const tok = tokenizer(), c = config('Qwen2ForCausalLM');
    const meta = ggufMetadata({ config: c, tensors: [], tokenizer: tok });
    const values = (key: string) => (meta.get(key) as { values: unknown[] }).values;
    const value = (key: string) => (meta.get(key) as { value: unknown }).value;
    const json = tok.toJson().tokenizer as { model: { vocab: Record<string, number>; merges: string[] }; added_tokens: { id: number; content: string }[] };
    const tokens = values('tokenizer.ggml.tokens') as string[], types = values('tokenizer.ggml.token_type') as number[];
    expect(value('tokenizer.ggml.model')).toBe('gpt2');
    expect(value('tokenizer.ggml.pre')).toBe('gpt-2');
    expect(tokens).toHaveLength(300);
    for (const [text, id] of Object.entries(json.model.vocab)) expect([tokens[id], types[id]]).toEqual([text, 1]);
    for (const t of json.added_tokens) expect([tokens[t.id], types[t.id]]).toEqual([t.content, 3]);
    const padded = tokens.map((t, id) => [t, id] as const).filter(([t]) => t.startsWith('[PAD'));
    expect(padded.length).toBe(300 - tok.vocabSize);
    for (const [t, id] of padded) expect([t, types[id]]).toEqual([`[PAD${id}]`, 5]);
    expect(values('tokenizer.ggml.merges')).toEqual(json.model.merges);
    expect(value('tokenizer.ggml.bos_token_id')).toBe(tok.tokenId('<|endoftext|>'));
    expect(value('tokenizer.ggml.eos_token_id')).toBe(tok.tokenId('<|endoftext|>'));
    expect(value('tokenizer.ggml.add_bos_token')).toBe(false);
    expect(value('tokenizer.chat_template')).toContain('<|im_start|>');
  });

  it('names Qwen2\'s and Llama 3\'s splits and refuses other pre-tokenizers', () => {
    const split = (regex: string) => ({
      type: 'Sequence',
      pretokenizers: [{ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false }],
    });
    const qwen2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    expect(preTokenizerName(split(qwen2))).toBe('qwen2');
    expect(preTokenizerName(split(qwen2.replace('\\p{N}|', '\\p{N}{1,3}|')))).toBe('llama-bpe');
    expect(() => preTokenizerName(split('\\s+'))).toThrow(/no llama.cpp pre-tokenizer name/);
    expect(() => preTokenizerName({ type: 'ByteLevel', add_prefix_space: true, use_regex: true })).toThrow(expect.objectContaining({ code: 'GRPO_UNSUPPORTED' }));
    expect(() => preTokenizerName({ type: 'Metaspace', replacement: '▁' })).toThrow(GrpoError);
  });
});

describe('GGUF export of a LoRA run', () => {
  it('merges the adapter into its base first: the file holds W + scale·B·A', async () => {
    const dir = scratch(), base = join(dir, 'base'), adapterDir = join(dir, 'adapter');
    const baseTensors = await checkpoint('Qwen2ForCausalLM', base);
    const settings = { ...LORA_DEFAULTS, rank: 2, alpha: 4, targetModules: ['q_proj', 'down_proj'] as const };
    const tensors = loraTensorShapes(config('Qwen2ForCausalLM'), { ...settings, targetModules: [...settings.targetModules] })
      .map((t, i) => ({ ...t, data: randomNormal(t.shape[0] * t.shape[1], 0.3, 50 + i) }));
    await saveAdapter(adapterDir, { settings: { ...settings, targetModules: [...settings.targetModules] }, baseModel: base, tensors });
    const result = await exportGguf(adapterDir, join(dir, 'merged.gguf'));
    expect(result).toMatchObject({ merged: true, architecture: 'qwen2', source: adapterDir });
    await mergeAdapter(base, adapterDir, join(dir, 'merged'));
    const merged = (await loadCheckpoint(join(dir, 'merged'))).tensors;
    const header = await readGgufHeader(join(dir, 'merged.gguf'));
    for (const name of ['model.layers.0.self_attn.q_proj.weight', 'model.layers.1.mlp.down_proj.weight', 'model.layers.1.mlp.up_proj.weight']) {
      const data = await readGgufTensor(join(dir, 'merged.gguf'), header, ggufName(name));
      expect(data).toEqual(merged.find((t) => t.name === name)!.data);
      const changed = !data.every((v, i) => v === baseTensors.find((t) => t.name === name)!.data[i]);
      expect(changed).toBe(!name.includes('up_proj'));
    }
  });
});

describe('grpo export', () => {
  it('writes the file and says what it wrote', async () => {
    const dir = scratch();
    await checkpoint('LlamaForCausalLM', join(dir, 'policy'));
    const io = capture();
    expect(await main(['export', '--gguf', join(dir, 'p.gguf'), '--policy', join(dir, 'policy'), '--dtype', 'f16', '--name', 'tiny'])).toBe(0);
    expect(io.out()).toMatch(/Wrote .*p\.gguf: llama, 20 tensors, f16/);
    const header = await readGgufHeader(join(dir, 'p.gguf'));
    expect(header.metadata.get('general.name')).toEqual({ type: 'string', value: 'tiny' });
    expect(header.tensors.find((t) => t.name === 'blk.0.attn_q.weight')?.type).toBe('F16');
  });

  it('refuses mistakes with one line naming them', async () => {
    const dir = scratch();
    await checkpoint('LlamaForCausalLM', join(dir, 'policy'));
    const io = capture();
    expect(await main(['export', '--policy', join(dir, 'policy')])).toBe(2);
    expect(await main(['export', '--gguf', join(dir, 'x.gguf'), '--policy', join(dir, 'policy'), '--dtype', 'q4'])).toBe(2);
    expect(await main(['export', '--gguf', join(dir, 'x.gguf'), '--policy', join(dir, 'nowhere')])).toBe(2);
    expect(io.err()).toMatch(/Missing --gguf <out.gguf>/);
    expect(io.err()).toMatch(/dtype must be one of f32, f16, bf16 but is "q4"/);
    expect(io.err()).toMatch(/Cannot read .*nowhere/);
  });
});

describe('GGUF errors', () => {
  it('a model without a tokenizer, linear and unexported rope scaling, base without an adapter, a bad alignment', async () => {
    const c = config('LlamaForCausalLM');
    expect(() => ggufMetadata({ config: c, tensors: [], tokenizer: undefined })).toThrow(/needs the tokenizer/);
    const yarn = { ...c, ropeScaling: { type: 'yarn' as const, factor: 4, originalMaxPositions: 16, betaFast: 32, betaSlow: 1, truncate: true } };
    expect(() => ggufMetadata({ config: yarn, tensors: [], tokenizer: tokenizer() })).toThrow(expect.objectContaining({ code: 'GRPO_UNSUPPORTED' }));
    const linear = ggufMetadata({ config: { ...c, ropeScaling: { type: 'linear', factor: 2 } }, tensors: [], tokenizer: tokenizer() });
    expect([linear.get('llama.rope.scaling.type'), linear.get('llama.rope.scaling.factor')]).toEqual([{ type: 'string', value: 'linear' }, { type: 'float32', value: 2 }]);
    const dir = scratch();
    await checkpoint('LlamaForCausalLM', join(dir, 'policy'));
    await expect(exportGguf(join(dir, 'policy'), join(dir, 'x.gguf'), { base: dir })).rejects.toThrow(/base is for an adapter folder/);
    const metadata = new Map<string, GgufValue>([['general.alignment', { type: 'uint32', value: 24 }]]);
    await expect(writeGguf(join(scratch(), 'a.gguf'), { metadata, tensors: [] })).rejects.toThrow(/power of two/);
    await expect(writeGguf(join(scratch(), 'b.gguf'), { metadata: new Map(), tensors: [{ name: 'x', dims: [2, 3], type: 'F32', data: new Float32Array(5) }] }))
      .rejects.toThrow(expect.objectContaining({ code: 'GRPO_SHAPE_MISMATCH' }));
  });

  it('the reader names a file that is not GGUF, truncated or corrupt', async () => {
    const dir = scratch(), good = join(dir, 'good.gguf');
    const tok = tokenizer(), c = config('LlamaForCausalLM');
    const policy = BuiltinPolicy.create(c, { seed: 1, tokenizer: tok });
    await writeModelGguf(good, { config: c, tensors: policy.getTensors(), tokenizer: tok });
    policy.dispose();
    const bytes = readFileSync(good);
    writeFileSync(join(dir, 'magic.gguf'), Buffer.concat([Buffer.from('GGML'), bytes.subarray(4)]));
    writeFileSync(join(dir, 'short.gguf'), bytes.subarray(0, 2000));
    writeFileSync(join(dir, 'data.gguf'), bytes.subarray(0, bytes.length - 64));
    const version = Buffer.from(bytes);
    version.writeUInt32LE(2, 4);
    writeFileSync(join(dir, 'v2.gguf'), version);
    await expect(readGgufHeader(join(dir, 'magic.gguf'))).rejects.toThrow(/not a GGUF file/);
    await expect(readGgufHeader(join(dir, 'short.gguf'))).rejects.toThrow(/header ends past the end of the file/);
    await expect(readGgufHeader(join(dir, 'data.gguf'))).rejects.toThrow(/runs past the end of the file/);
    await expect(readGgufHeader(join(dir, 'v2.gguf'))).rejects.toThrow(expect.objectContaining({ code: 'GRPO_UNSUPPORTED' }));
    await expect(readGgufHeader(join(dir, 'none.gguf'))).rejects.toThrow(/Cannot read .*none.gguf \(expected a GGUF file\)/);
  });
});
