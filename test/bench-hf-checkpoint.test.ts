// bench/hf-checkpoint.js's pieces (the bench itself takes minutes at a real shape and is not part of npm test): the
// Hugging Face folder writer at tiny sizes of the real configs loads back through BuiltinPolicy with the weights it
// drew, sharded or not, with a synthetic or a copied tokenizer; and the arithmetic of the 48 × 8 and 7B estimates.
// The bench and these tests read the compiled library in dist/ (built by `npm test`'s pretest).
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { realConfig, SHAPES, writeHfFolder } from '../bench/hf-folder.js';
import { estimateStep, kvBytesPerPosition, measuredStep, stepAt, TARGET_7B } from '../bench/hf-estimate.js';
import { BuiltinPolicy, configFromHf, readModelWeights } from '../dist/index.js';
import { tinyTokenizer } from './helpers/trainer.js';

type Json = Record<string, unknown>;

/** The real config.json of `shape` with TINY sizes (as scripts/make-model-fixture.py shrinks them; head_dim kept when set). */
function tiny(shape: string, vocab = 300): { config: Json; generation: Json } {
  const { config, generation } = realConfig(shape) as { config: Json; generation: Json };
  const sizes = { vocab_size: vocab, hidden_size: 32, intermediate_size: 48, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2 };
  return { config: { ...config, ...sizes, ...(config.head_dim ? { head_dim: 16 } : {}) }, generation };
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'grpo-hf-folder-'));

/** The JSON header of a .safetensors file. */
function header(path: string): Record<string, { dtype: string; shape: number[] }> {
  const bytes = readFileSync(path);
  return JSON.parse(bytes.subarray(8, 8 + Number(bytes.readBigUInt64LE(0))).toString('utf8'));
}

describe('bench/hf-folder.js: a Hugging Face folder of a real config', () => {
  it.each(Object.keys(SHAPES))('%s at tiny sizes loads back through BuiltinPolicy with the bf16 weights, config, generation config and tokenizer it wrote', async (shape) => {
    const { config, generation } = tiny(shape);
    const dir = tempDir();
    const { files, tokenizerSize } = await writeHfFolder(dir, { config, generation, seed: 3 });
    expect(files).toEqual(['model.safetensors']);
    expect(tokenizerSize).toBe(300);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toEqual(config);
    expect(JSON.parse(readFileSync(join(dir, 'generation_config.json'), 'utf8'))).toEqual(generation);
    const { __metadata__: metadata, ...tensors } = header(join(dir, 'model.safetensors'));
    expect(metadata).toEqual({ format: 'pt' });
    expect(Object.keys(tensors)).toEqual(Object.keys(tensors).sort());
    expect(new Set(Object.values(tensors).map((t) => t.dtype))).toEqual(new Set(['BF16']));

    const policy = await BuiltinPolicy.load(dir);
    try {
      expect(policy.config).toEqual(configFromHf(config));
      expect(policy.tokenizer?.vocabSize).toBe(300);
      expect(policy.generationDefaults.stopTokens).toEqual([generation.eos_token_id].flat());
      const stored = new Map((await readModelWeights(dir)).map((t) => [t.name, t.data]));
      for (const t of policy.getTensors()) {
        expect(t.data, t.name).toEqual(stored.get(t.name));
        const bits = new Uint32Array(t.data.buffer);
        expect(bits.every((b) => (b & 0xffff) === 0), `${t.name} is bf16`).toBe(true);
        if (/norm\.weight$/.test(t.name)) expect(t.data.every((x) => x === 1), t.name).toBe(true);
        else if (t.name.endsWith('.bias')) expect(t.data.every((x) => x === 0), t.name).toBe(true);
      }
      const embed = stored.get('model.embed_tokens.weight')!;
      const std = Math.sqrt(embed.reduce((s, x) => s + x * x, 0) / embed.length);
      expect(std).toBeGreaterThan(0.9 * (config.initializer_range as number));
      expect(std).toBeLessThan(1.1 * (config.initializer_range as number));
      const [out] = await policy.generate(['Alien (1979)'], { maxNewTokens: 3, stopTokens: [] });
      expect(out.tokens.length).toBe(3);
    } finally {
      policy.dispose();
    }
  });

  it('above maxShardBytes it writes shards and model.safetensors.index.json as transformers does, with the same weights', async () => {
    const { config, generation } = tiny('qwen3-0.6b');
    const whole = tempDir(), sharded = tempDir();
    await writeHfFolder(whole, { config, generation, seed: 5 });
    const { files } = await writeHfFolder(sharded, { config, generation, seed: 5, maxShardBytes: 40_000 });
    const shards = files.filter((f: string) => f.endsWith('.safetensors'));
    expect(shards.length).toBeGreaterThan(1);
    expect(shards).toEqual(shards.map((_: string, i: number) => `model-${String(i + 1).padStart(5, '0')}-of-${String(shards.length).padStart(5, '0')}.safetensors`));
    const index = JSON.parse(readFileSync(join(sharded, 'model.safetensors.index.json'), 'utf8'));
    const parts = shards.map((f: string) => header(join(sharded, f)));
    const inShards = parts.flatMap((h: Json) => Object.keys(h).filter((k) => k !== '__metadata__'));
    expect(Object.keys(index.weight_map).sort()).toEqual([...inShards].sort());
    const bytes = parts.flatMap((h: Record<string, { shape: number[] }>) => Object.entries(h).filter(([k]) => k !== '__metadata__')
      .map(([, t]) => 2 * t.shape.reduce((a, b) => a * b, 1)));
    expect(index.metadata.total_size).toBe(bytes.reduce((a: number, b: number) => a + b, 0));
    const [a, b] = await Promise.all([BuiltinPolicy.load(whole), BuiltinPolicy.load(sharded)]);
    try {
      expect(b.getTensors()).toEqual(a.getTensors());
    } finally {
      a.dispose();
      b.dispose();
    }
  });

  it('--tokenizer copies a tokenizer folder (it encodes as the original); one larger than vocab_size is refused', async () => {
    const source = tempDir();
    const { tokenizer, config: tokenizerConfig } = tinyTokenizer().toJson();
    writeFileSync(join(source, 'tokenizer.json'), JSON.stringify(tokenizer));
    writeFileSync(join(source, 'tokenizer_config.json'), JSON.stringify(tokenizerConfig));
    const { config, generation } = tiny('qwen2.5-0.5b');
    const dir = tempDir();
    expect((await writeHfFolder(dir, { config, generation, tokenizerDir: source })).tokenizerSize).toBe(tinyTokenizer().vocabSize);
    const policy = await BuiltinPolicy.load(dir);
    try {
      const text = 'Recommend three films like Alien (1979).';
      expect(Array.from(policy.tokenizer!.encode(text).ids)).toEqual(Array.from(tinyTokenizer().encode(text).ids));
    } finally {
      policy.dispose();
    }
    const small = tiny('qwen2.5-0.5b', 280);
    await expect(writeHfFolder(tempDir(), { ...small, tokenizerDir: source })).rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH' });
    const empty = join(tempDir(), 'empty');
    mkdirSync(empty);
    await expect(writeHfFolder(tempDir(), { ...small, tokenizerDir: empty })).rejects.toMatchObject({ code: 'GRPO_INVALID_ARGUMENT' });
  });
});

describe('bench/hf-estimate.js: the step carried to a bigger batch and to a 7B model', () => {
  // a 1e9-parameter model (hidden 1000, 10 layers, kv dim 100: 8,000 KV bytes per position); a 64-row step of 10,000
  // tokens (60 prompt + 96.25 completion tokens per row, capped at 100) in 100 s (20 s of them the optimizer step): 16 GB of state, 100 kB per token of activations over micro-batches of up to 2,000 tokens, and a
  // rollout whose generate rose 3 GB above the RSS before it at 64 rows × 200 positions
  const m = {
    model: { parameters: 1e9, hiddenSize: 1000, numLayers: 10, kvDim: 100 }, stateBytes: 16e9, activationBytesPerToken: 1e5, runTokens: 2000,
    generationBytes: 3e9, generationPositions: 64 * 200, cacheLength: 200, stepSeconds: 100, optimizerSeconds: 20, stepTokens: 1e4, rows: 64,
    promptTokens: 64 * 60, completionTokens: 64 * 96.25, maxTokens: 100, microBatchTokens: 2000,
  };

  it('the KV cache: float32 k and v of every layer per position', () => {
    expect(kvBytesPerPosition(m.model)).toBe(8000);
    expect(kvBytesPerPosition(TARGET_7B)).toBe(2 * 28 * 512 * 4);
  });

  it('at the measured step: state + activations of the largest micro-batch + the generate peak, and the measured time', () => {
    expect(measuredStep(m)).toEqual({ rows: 64, kvRows: 64, tokens: 1e4, cacheLength: 200, runTokens: 2000 });
    const e = estimateStep(m, measuredStep(m));
    expect(e).toMatchObject({ byParameters: 1, activationScale: 1, stateBytes: 16e9, activationBytes: 2e8, kvBytes: 8000 * 64 * 200 });
    expect(e.generationRest).toBeCloseTo(3e9 - 8000 * 64 * 200, 0);
    expect(e.bytes).toBeCloseTo(16e9 + 2e8 + 3e9, 0);
    expect(e.seconds).toBeCloseTo(100, 9);
  });

  it('48 × 8: tokens and KV cache grow with the rows, activations stop at the micro-batch budget, state, the rest of generate and the optimizer time stay', () => {
    const at = stepAt(m, 48, 8);
    expect(at).toEqual({ rows: 384, kvRows: 384, tokens: 6e4, cacheLength: 200, runTokens: 2000 });
    const e = estimateStep(m, at);
    expect(e.kvBytes).toBe(8000 * 384 * 200);
    expect(e.bytes).toBeCloseTo(16e9 + 2e8 + (3e9 - 8000 * 64 * 200) + 8000 * 384 * 200, 0);
    expect(e.seconds).toBeCloseTo(20 + (80 / 1e4) * 6e4, 9); // the optimizer step does not grow with the tokens
    expect(stepAt({ ...m, microBatchTokens: 0 }, 48, 8).runTokens).toBe(6e4); // without micro-batches, the whole batch at once
  });

  it('generation.maxRows: the KV cache holds one call\'s rows, everything else as with one call', () => {
    const all = stepAt(m, 48, 8), chunked = stepAt(m, 48, 8, undefined, 48);
    expect(chunked).toEqual({ ...all, kvRows: 48 });
    expect(stepAt(m, 2, 8, undefined, 48).kvRows).toBe(16); // fewer rows than maxRows: all of them
    const e = estimateStep(m, chunked);
    expect(e.kvBytes).toBe(8000 * 48 * 200);
    expect(estimateStep(m, all).bytes - e.bytes).toBeCloseTo(8000 * (384 - 48) * 200, 0);
  });

  it('another cap: completions in proportion to it, the KV cache longer by the difference', () => {
    expect(stepAt(m, 8, 8, 200)).toEqual({ rows: 64, kvRows: 64, tokens: 64 * (60 + 192.5), cacheLength: 300, runTokens: 2000 });
    expect(stepAt(m, 1, 2, 10)).toEqual({ rows: 2, kvRows: 2, tokens: 2 * (60 + 9.625), cacheLength: 110, runTokens: 2 * (60 + 9.625) });
  });

  it('7B: state and the rest of generate by parameters, activations per token by hidden size × layers, KV by its own layout, time per token by parameters', () => {
    expect(TARGET_7B).toEqual({ name: 'Qwen2.5-7B', parameters: 7.6e9, hiddenSize: 3584, numLayers: 28, kvDim: 512 });
    const e = estimateStep(m, measuredStep(m), TARGET_7B);
    expect(e.byParameters).toBeCloseTo(7.6, 12);
    expect(e.activationScale).toBeCloseTo((3584 * 28) / (1000 * 10), 12);
    expect(e.stateBytes).toBeCloseTo(16e9 * 7.6, 0);
    expect(e.activationBytes).toBeCloseTo(1e5 * 10.0352 * 2000, 0);
    expect(e.generationRest).toBeCloseTo((3e9 - 8000 * 64 * 200) * 7.6, 0);
    expect(e.kvBytes).toBe(2 * 28 * 512 * 4 * 64 * 200);
    expect(e.bytes).toBeCloseTo(e.stateBytes + e.activationBytes + e.generationRest + e.kvBytes, 0);
    expect(e.optimizerSeconds).toBeCloseTo(20 * 7.6, 9);
    expect(e.secondsPerToken).toBeCloseTo((80 / 1e4) * 7.6, 12);
    expect(e.seconds).toBeCloseTo(760, 9);
  });
});
