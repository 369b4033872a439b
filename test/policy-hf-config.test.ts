// The config.json and generation_config.json of real checkpoints (test/fixtures/hf-configs: Qwen2.5-0.5B, Qwen3-0.6B,
// Llama-3.2-1B as published) and every field that is accepted or refused. The logits of each RoPE scaling type
// against transformers' formulas are in test/policy-fixture.test.ts; here: that each fixture's scaling changes the
// logits (so that parity there is not parity of plain RoPE), and the rules around it.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { checkConfig, configFromHf, configToHf, type ModelConfig } from '../lib/policy/config.js';
import { generationDefaults } from '../lib/policy/generation-config.js';
import { sftLoss } from '../lib/policy/policy.js';
import { readModelWeights } from '../lib/policy/safetensors.js';

const fixture = (path: string) => fileURLToPath(new URL(`./fixtures/${path}`, import.meta.url));
const json = (path: string) => JSON.parse(readFileSync(fixture(path), 'utf8')) as Record<string, unknown>;
const real = (name: string) => json(`hf-configs/${name}.config.json`);

/** The error configFromHf throws for `config`, as [code, message]. */
function refusal(config: Record<string, unknown>): [string, string] | undefined {
  try {
    configFromHf(config);
  } catch (error) {
    const e = error as { code: string; message: string };
    return [e.code, e.message];
  }
  return undefined;
}

describe('real config.json files', () => {
  it('Qwen2.5-0.5B: QKV bias, tied, GQA 14/2, sliding window off', () => {
    expect(configFromHf(real('qwen2.5-0.5b'))).toEqual({
      vocabSize: 151936, hiddenSize: 896, intermediateSize: 4864, numLayers: 24, numHeads: 14, numKvHeads: 2, headDim: 64,
      maxPositions: 32768, rmsNormEps: 1e-6, ropeTheta: 1e6, tieEmbeddings: true, attentionBias: true, architecture: 'Qwen2ForCausalLM',
    });
  });

  it('Qwen3-0.6B: head_dim 128 beside hidden 1024 / 16 heads, q/k norms, rope_scaling null', () => {
    expect(configFromHf(real('qwen3-0.6b'))).toEqual({
      vocabSize: 151936, hiddenSize: 1024, intermediateSize: 3072, numLayers: 28, numHeads: 16, numKvHeads: 8, headDim: 128,
      maxPositions: 40960, rmsNormEps: 1e-6, ropeTheta: 1e6, tieEmbeddings: true, attentionBias: false, qkNorm: true,
      architecture: 'Qwen3ForCausalLM',
    });
  });

  it('Llama-3.2-1B: llama3 RoPE scaling, rms_norm_eps 1e-5', () => {
    expect(configFromHf(real('llama-3.2-1b'))).toEqual({
      vocabSize: 128256, hiddenSize: 2048, intermediateSize: 8192, numLayers: 16, numHeads: 32, numKvHeads: 8, headDim: 64,
      maxPositions: 131072, rmsNormEps: 1e-5, ropeTheta: 500000, tieEmbeddings: true, attentionBias: false, architecture: 'LlamaForCausalLM',
      ropeScaling: { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 8192 },
    });
  });

  it.each(['qwen2.5-0.5b', 'qwen3-0.6b', 'llama-3.2-1b'])('%s: configToHf reads back into the same config', (name) => {
    const config = configFromHf(real(name));
    expect(configFromHf(configToHf(config))).toEqual(config);
  });
});

describe('Qwen3 head_dim 2× hidden / heads, end to end', () => {
  it('the scaled Qwen3-0.6B (head_dim 16 beside 32 / 4) and its YaRN form train: SFT loss falls over a few steps', async () => {
    for (const dir of ['qwen3-0.6b-tiny', 'qwen3-yarn-tiny']) {
      const policy = await BuiltinPolicy.load(fixture(`model/${dir}`), { optimizer: { learningRate: 1e-2 } });
      const batch = { prompts: [[1, 2, 3]], completions: [[4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]] };
      const losses: number[] = [];
      for (let i = 0; i < 6; i++) losses.push((await policy.step(batch, sftLoss())).loss);
      expect(losses[5]).toBeLessThan(losses[0] * 0.8);
    }
  });
});

describe('rope_scaling', () => {
  const base = configToHf(configFromHf(real('qwen3-0.6b')));
  const scaling = (rope_scaling: unknown) => configFromHf({ ...base, rope_scaling }).ropeScaling;

  it('"type" is the old spelling of "rope_type"; null, absent and "default" are plain RoPE', () => {
    expect(scaling({ type: 'yarn', factor: 4, original_max_position_embeddings: 32768 }))
      .toEqual(scaling({ rope_type: 'yarn', factor: 4, original_max_position_embeddings: 32768 }));
    expect(scaling(null)).toBeUndefined();
    expect(scaling({ rope_type: 'default' })).toBeUndefined();
    expect(configFromHf(real('qwen2.5-0.5b')).ropeScaling).toBeUndefined();
  });

  it("yarn takes transformers' defaults (modeling_rope_utils.py 310-312, 327-329, 359): original context = max_position_embeddings, beta 32/1, truncated", () => {
    expect(scaling({ rope_type: 'yarn', factor: 2 })).toEqual({ type: 'yarn', factor: 2, originalMaxPositions: 40960, betaFast: 32, betaSlow: 1, truncate: true });
  });

  it('transformers 5 rope_parameters (rope_theta folded in) reads as rope_theta + rope_scaling', () => {
    const { rope_theta: _, rope_scaling: __, ...rest } = base;
    const config = configFromHf({ ...rest, rope_parameters: { rope_type: 'linear', factor: 2, rope_theta: 5e5 } });
    expect([config.ropeTheta, config.ropeScaling]).toEqual([5e5, { type: 'linear', factor: 2 }]);
  });

  it('other types, unknown keys and bad values are refused naming the field', () => {
    expect(() => scaling({ rope_type: 'longrope', short_factor: [1], long_factor: [1] })).toThrow(expect.objectContaining({
      code: 'GRPO_UNSUPPORTED', message: expect.stringContaining('rope_scaling.rope_type "longrope" is not supported'),
    }));
    expect(() => scaling({ rope_type: 'linear', factor: 2, low_freq_factor: 1 })).toThrow(expect.objectContaining({
      code: 'GRPO_UNSUPPORTED', message: expect.stringContaining('rope_scaling.low_freq_factor is not supported with rope_type "linear"'),
    }));
    expect(() => scaling({ rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4 })).toThrow(expect.objectContaining({
      code: 'GRPO_DATA_FORMAT', message: expect.stringContaining('rope_scaling.original_max_position_embeddings'),
    }));
    expect(() => scaling({ rope_type: 'linear', factor: 0.5 })).toThrow(expect.objectContaining({
      code: 'GRPO_DATA_FORMAT', message: expect.stringContaining('rope_scaling.factor to be a number >= 1'),
    }));
    expect(() => scaling({ rope_type: 'yarn', factor: 2, truncate: 'yes' })).toThrow(expect.objectContaining({ code: 'GRPO_DATA_FORMAT' }));
    expect(() => scaling('yarn')).toThrow(expect.objectContaining({ code: 'GRPO_DATA_FORMAT', message: expect.stringContaining('rope_scaling') }));
  });

  it('a ModelConfig given in code: factor < 1 of any type (dynamic too) is a value-range error', () => {
    const config = configFromHf(real('qwen3-0.6b'));
    expect(() => checkConfig({ ...config, ropeScaling: { type: 'dynamic', factor: 0.5 } })).toThrow(expect.objectContaining({
      code: 'GRPO_VALUE_RANGE', message: expect.stringContaining('config.ropeScaling.factor >= 1'),
    }));
  });

  it('llama3 with low_freq_factor >= high_freq_factor is a native value-range error', () => {
    const config = configFromHf({ ...configToHf(configFromHf(real('llama-3.2-1b'))), vocab_size: 8, hidden_size: 8, intermediate_size: 8,
      num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, head_dim: 4 });
    const bad: ModelConfig = { ...config, ropeScaling: { type: 'llama3', factor: 8, lowFreqFactor: 4, highFreqFactor: 4, originalMaxPositions: 16 } };
    expect(() => BuiltinPolicy.create(bad)).toThrow(expect.objectContaining({ code: 'GRPO_VALUE_RANGE', message: expect.stringContaining('low_freq_factor') }));
  });
});

describe('each scaled fixture depends on its RoPE scaling', () => {
  const logitsOf = async (dir: string, change: (c: ModelConfig) => ModelConfig) => {
    const config = change(configFromHf(json(`model/${dir}/config.json`)));
    const policy = BuiltinPolicy.create(config);
    policy.setTensors(await readModelWeights(fixture(`model/${dir}`)));
    const expected = json(`model/${dir}/expected.json`) as unknown as { sequences: { tokens: number[] }[] };
    return policy.logits([expected.sequences[0].tokens]);
  };
  const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
  const plain = (c: ModelConfig): ModelConfig => ({ ...c, ropeScaling: undefined });

  it.each(['qwen2.5-yarn-tiny', 'qwen3-yarn-tiny', 'llama-3.2-1b-tiny', 'smollm-linear-tiny', 'mistral-yarn-tiny'])(
    '%s: without rope_scaling the logits move by far more than the parity tolerance (2e-4)', async (dir) => {
      expect(maxDiff(await logitsOf(dir, (c) => c), await logitsOf(dir, plain))).toBeGreaterThan(1e-2);
    });

  it("YaRN's attention factor (0.1·ln(factor) + 1 on cos and sin) is applied: forcing it to 1 moves the logits", async () => {
    const unscaled = (c: ModelConfig): ModelConfig => ({ ...c, ropeScaling: { ...(c.ropeScaling as object), attentionFactor: 1 } as ModelConfig['ropeScaling'] });
    expect(maxDiff(await logitsOf('qwen3-yarn-tiny', (c) => c), await logitsOf('qwen3-yarn-tiny', unscaled))).toBeGreaterThan(1e-2);
  });

  it('dynamic NTK within max_position_embeddings is plain RoPE, bit for bit (transformers 178-243: the base grows only past it)', async () => {
    expect(await logitsOf('mistral-dynamic-tiny', (c) => c)).toEqual(await logitsOf('mistral-dynamic-tiny', plain));
  });

  it('dynamic NTK: a sequence past max_position_embeddings is refused (the model never runs the grown base)', async () => {
    const policy = await BuiltinPolicy.load(fixture('model/mistral-dynamic-tiny'));
    const tokens = Array.from({ length: policy.config.maxPositions + 2 }, (_, i) => i % 7); // the last token is only a target
    await expect(policy.score({ prompts: [tokens.slice(0, 2)], completions: [tokens.slice(2)] })).rejects.toMatchObject({ code: "GRPO_SHAPE_MISMATCH", message: expect.stringContaining("max_position_embeddings = 32") });
  });

  it('a checkpoint with rope_scaling saves and loads back the same logits', async () => {
    const policy = await BuiltinPolicy.load(fixture('model/llama-3.2-1b-tiny'));
    const dir = join(mkdtempSync(join(tmpdir(), 'grpo-rope-')), 'ckpt');
    await policy.save(dir);
    expect((json(`model/llama-3.2-1b-tiny/config.json`).rope_scaling as object)).toMatchObject(
      JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).rope_scaling);
    const tokens = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]];
    expect(await (await BuiltinPolicy.load(dir)).logits(tokens)).toEqual(await policy.logits(tokens));
  });
});

describe('fields refused with GRPO_UNSUPPORTED naming them', () => {
  const qwen2 = real('qwen2.5-0.5b'), qwen3 = real('qwen3-0.6b'), llama = real('llama-3.2-1b');
  const mistral: Record<string, unknown> = { ...configToHf(configFromHf(llama)), architectures: ['MistralForCausalLM'], model_type: 'mistral', rope_scaling: null };
  const cases: [string, Record<string, unknown>, string][] = [
    ['Qwen2 use_sliding_window: true', { ...qwen2, use_sliding_window: true }, 'use_sliding_window = true'],
    ['Qwen3 layer_types with sliding_attention', { ...qwen3, layer_types: ['full_attention', 'sliding_attention'] }, 'layer_types'],
    ['Mistral sliding_window below max_position_embeddings', { ...mistral, sliding_window: 4096 }, 'sliding_window = 4096'],
    ['torch_dtype other than float32/bfloat16/float16', { ...qwen3, torch_dtype: 'float8_e4m3fn' }, 'torch_dtype "float8_e4m3fn"'],
    ['partial_rotary_factor', { ...llama, partial_rotary_factor: 0.5 }, 'partial_rotary_factor = 0.5'],
    ['attention_dropout', { ...qwen2, attention_dropout: 0.1 }, 'attention_dropout = 0.1'],
    ['hidden_act', { ...llama, hidden_act: 'gelu' }, 'hidden_act "gelu"'],
    ['mlp_bias', { ...llama, mlp_bias: true }, 'mlp_bias = true'],
    ['Llama attention_bias (an o_proj bias too)', { ...llama, attention_bias: true }, 'attention_bias = true is not supported for LlamaForCausalLM'],
    ['Qwen3 attention_bias (an o_proj bias too)', { ...qwen3, attention_bias: true }, 'attention_bias = true is not supported for Qwen3ForCausalLM'],
    ['architecture', { ...llama, architectures: ['Gemma2ForCausalLM'] }, 'Gemma2ForCausalLM'],
  ];

  it.each(cases)('%s', (_, config, named) => {
    expect(refusal(config)).toEqual(['GRPO_UNSUPPORTED', expect.stringContaining(named)]);
  });

  it('accepted as they are: Qwen2 sliding_window with use_sliding_window false, Mistral sliding_window null or >= the context, f16/f32 dtypes', () => {
    expect(refusal({ ...qwen2, sliding_window: 4096 })).toBeUndefined();
    expect(refusal({ ...mistral, sliding_window: null })).toBeUndefined();
    expect(refusal({ ...mistral, sliding_window: mistral.max_position_embeddings })).toBeUndefined();
    expect(refusal({ ...qwen3, layer_types: Array(28).fill('full_attention') })).toBeUndefined();
    for (const dtype of ['float16', 'float32', 'bfloat16']) expect(refusal({ ...qwen3, torch_dtype: dtype })).toBeUndefined();
  });

  it('tie_word_embeddings false is a separate lm_head.weight; Mistral never has attention biases', () => {
    const small = { vocab_size: 16, hidden_size: 16, intermediate_size: 16, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, head_dim: 8 };
    const names = BuiltinPolicy.create(configFromHf({ ...llama, ...small, tie_word_embeddings: false })).tensorList().map((t) => t.name);
    expect(names).toContain('lm_head.weight');
    expect(configFromHf({ ...mistral, attention_bias: true }).attentionBias).toBe(false);
    const biased: ModelConfig = { ...configFromHf({ ...llama, ...small }), attentionBias: true };
    expect(() => BuiltinPolicy.create(biased)).toThrow(expect.objectContaining({ code: 'GRPO_UNSUPPORTED', message: expect.stringContaining('Qwen2ForCausalLM layout') }));
  });
});

describe('generation_config.json', () => {
  const gen = (name: string) => json(`hf-configs/${name}.generation_config.json`);

  it("Qwen3-0.6B: both EOS ids stop; its temperature, top_k and top_p are generate's defaults", () => {
    expect(generationDefaults(gen('qwen3-0.6b'))).toEqual({ stopTokens: [151645, 151643], temperature: 0.6, topK: 20, topP: 0.95 });
  });

  it("Llama-3.2-1B: one EOS id; do_sample with no top_k takes transformers' top_k 50 (generation/configuration_utils.py 357)", () => {
    expect(generationDefaults(gen('llama-3.2-1b'))).toEqual({ stopTokens: [128001], temperature: 0.6, topK: 50, topP: 0.9 });
  });

  it('Qwen2.5-0.5B: do_sample false is greedy; repetition_penalty and min_p carry over; no do_sample leaves sampling alone', () => {
    expect(generationDefaults(gen('qwen2.5-0.5b'))).toEqual({ stopTokens: [151643], temperature: 0 });
    expect(generationDefaults({ do_sample: true, min_p: 0.05, repetition_penalty: 1.1 })).toEqual({ temperature: 1, topK: 50, topP: 1, minP: 0.05, repetitionPenalty: 1.1 });
    expect(generationDefaults({ eos_token_id: 2, temperature: 0.3 })).toEqual({ stopTokens: [2] });
  });

  it('bad fields are GRPO_DATA_FORMAT naming them', () => {
    expect(() => generationDefaults({ eos_token_id: ['a'] })).toThrow(expect.objectContaining({ code: 'GRPO_DATA_FORMAT', message: expect.stringContaining('"eos_token_id"') }));
    expect(() => generationDefaults({ do_sample: 'yes' })).toThrow(expect.objectContaining({ code: 'GRPO_DATA_FORMAT', message: expect.stringContaining('"do_sample"') }));
    expect(() => generationDefaults({ do_sample: true, top_p: 'x' })).toThrow(expect.objectContaining({ code: 'GRPO_DATA_FORMAT', message: expect.stringContaining('"top_p"') }));
  });

  it('a loaded checkpoint generates with them unless the call sets its own, and saves them back', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'grpo-gen-')), 'ckpt');
    const policy = await BuiltinPolicy.load(fixture('model/qwen3-0.6b-tiny'));
    await policy.save(dir);
    // EOS ids 5 and 9 of the tiny vocabulary; do_sample false: greedy
    writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: [5, 9], do_sample: false }));
    const loaded = await BuiltinPolicy.load(dir);
    expect(loaded.generationDefaults).toEqual({ stopTokens: [5, 9], temperature: 0 });
    const prompt = [[1, 2, 3]];
    const greedy = await loaded.generate(prompt, { maxNewTokens: 12, stopTokens: [], temperature: 0 });
    const byDefault = await loaded.generate(prompt, { maxNewTokens: 12 });
    const firstStop = greedy[0].tokens.findIndex((t) => t === 5 || t === 9);
    expect(Array.from(byDefault[0].tokens)).toEqual(Array.from(greedy[0].tokens.slice(0, firstStop < 0 ? 12 : firstStop + 1)));
    const again = join(dir, '..', 'again');
    await loaded.save(again);
    expect(JSON.parse(readFileSync(join(again, 'generation_config.json'), 'utf8'))).toMatchObject({ eos_token_id: [5, 9], do_sample: false });
    expect((await loaded.clone()).generationDefaults).toEqual(loaded.generationDefaults);
  });
});
