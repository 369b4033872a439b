// Merging a LoRA adapter into a Hugging Face folder: the merged weights against W + scale·B·A computed here
// (peft/src/peft/tuners/lora/layer.py get_delta_weight, lines 1005-1028: transpose(B @ A, fan_in_fan_out) · scaling,
// scaling alpha / r or alpha / √r at lines 278-281), the base's dtype and shards kept, the merged model's logits
// equal to the base's with W' set, the other files copied, `grpo merge` end to end, and typed errors.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../lib/cli/main.js';
import { GrpoError } from '../lib/errors.js';
import { LORA_DEFAULTS, type LoraSettings } from '../lib/options/lora.js';
import { trainBpe } from '../lib/policy/bpe-train.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { configToHf, type ModelConfig } from '../lib/policy/config.js';
import { loraTensorShapes, saveAdapter, type LoraAdapter } from '../lib/policy/lora-format.js';
import { mergeAdapter } from '../lib/policy/lora-merge.js';
import { readModelWeights, readSafetensors, writeModelWeights, writeSafetensors, type NamedTensor, type WeightDtype } from '../lib/policy/safetensors.js';
import { expectClose } from './helpers/close.js';
import { randomInts, randomNormal } from './helpers/random.js';

const tiny: ModelConfig = {
  vocabSize: 300, hiddenSize: 16, intermediateSize: 24, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 4,
  maxPositions: 32, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: true, architecture: 'Qwen2ForCausalLM',
};
const TORCH_DTYPE: Record<WeightDtype, string> = { F32: 'float32', BF16: 'bfloat16', F16: 'float16' };
const scratch = () => mkdtempSync(join(tmpdir(), 'grpo-merge-'));
const settings = (over: Partial<LoraSettings> = {}): LoraSettings => ({ ...LORA_DEFAULTS, rank: 3, alpha: 6, targetModules: ['q_proj', 'v_proj', 'down_proj'], ...over });

/** A Hugging Face folder of the tiny config with random weights stored as `dtype`, a tokenizer and generation settings. */
async function writeBase(dir: string, dtype: WeightDtype = 'F32', maxShardBytes = Infinity): Promise<NamedTensor[]> {
  const policy = BuiltinPolicy.create(tiny, { seed: 7 });
  const tensors = policy.getTensors();
  policy.dispose();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...configToHf(tiny), torch_dtype: TORCH_DTYPE[dtype] }));
  if (dtype === 'F32') await writeModelWeights(dir, tensors, maxShardBytes);
  else await writeSafetensors(join(dir, 'model.safetensors'), tensors, { format: 'pt' }, dtype);
  const { tokenizer, config } = trainBpe(['merged adapters keep the tokenizer of the base'], { vocabSize: 270 });
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(config));
  writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: 3, do_sample: true, temperature: 0.7 }));
  return readModelWeights(dir); // as stored (rounded to dtype), widened
}

async function writeAdapter(dir: string, s: LoraSettings, baseModel: string | null = null): Promise<LoraAdapter> {
  const adapter = { settings: s, baseModel, tensors: loraTensorShapes(tiny, s).map((t, i) => ({ ...t, data: randomNormal(t.shape[0] * t.shape[1], 0.2, 100 + i) })) };
  await saveAdapter(dir, adapter);
  return adapter;
}

/** W + scale · B·A for every weight the adapter targets, in float64 with the sum over r innermost; float32 values. */
function referenceMerge(base: readonly NamedTensor[], adapter: LoraAdapter): Map<string, Float64Array> {
  const { rank, alpha, rslora } = adapter.settings, scale = rslora ? alpha / Math.sqrt(rank) : alpha / rank;
  const find = (name: string) => adapter.tensors.find((t) => t.name === name)?.data;
  const out = new Map<string, Float64Array>();
  for (const w of base) {
    const a = find(w.name.replace(/\.weight$/, '.lora_A.weight')), b = find(w.name.replace(/\.weight$/, '.lora_B.weight'));
    if (!a || !b) continue;
    const [rows, cols] = w.shape, merged = new Float64Array(rows * cols);
    for (let o = 0; o < rows; o++) {
      for (let i = 0; i < cols; i++) {
        let delta = 0;
        for (let k = 0; k < rank; k++) delta += b[o * rank + k] * a[k * cols + i];
        merged[o * cols + i] = w.data[o * cols + i] + scale * delta;
      }
    }
    out.set(w.name, merged);
  }
  return out;
}

/** Half a unit in the last place of `v` in a float format with `mantissa` stored bits (normal numbers). */
const halfUlp = (v: number, mantissa: number) => 2 ** (Math.floor(Math.log2(Math.abs(v))) - mantissa - 1);

async function folders(dtype: WeightDtype = 'F32', s = settings(), maxShardBytes = Infinity) {
  const root = scratch(), base = join(root, 'base'), adapterDir = join(root, 'adapter'), out = join(root, 'merged');
  const baseTensors = await writeBase(base, dtype, maxShardBytes);
  const adapter = await writeAdapter(adapterDir, s, base);
  return { root, base, adapterDir, out, baseTensors, adapter, expected: referenceMerge(baseTensors, adapter) };
}

describe('mergeAdapter', () => {
  it('adds (alpha / r)·B·A to every target weight of a float32 base and leaves every other tensor as it was', async () => {
    const f = await folders();
    const progress: [number, number, string][] = [];
    const result = await mergeAdapter(f.base, f.adapterDir, f.out, { onProgress: (...p) => progress.push(p) });
    expect(result.merged).toBe(6);
    expect(progress.map((p) => p.slice(0, 2))).toEqual([1, 2, 3, 4, 5, 6].map((i) => [i, 6]));
    expect(progress[0][2]).toBe('model.layers.0.self_attn.q_proj.weight');
    const merged = await readModelWeights(f.out);
    expect(merged.map((t) => t.name)).toEqual(f.baseTensors.map((t) => t.name));
    for (const t of merged) {
      const want = f.expected.get(t.name);
      if (want) expectClose(t.data, Float32Array.from(want), { atol: 1e-7, rtol: 1e-6 });
      else expect(t.data).toEqual(f.baseTensors.find((u) => u.name === t.name)!.data);
    }
    expect(f.expected.size).toBe(6);
    for (const file of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']) {
      expect(readFileSync(join(f.out, file))).toEqual(readFileSync(join(f.base, file)));
    }
    expect(result.files).toEqual(['model.safetensors', 'config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']);
  });

  it('scales by alpha / √r with use_rslora', async () => {
    const f = await folders('F32', settings({ rslora: true, rank: 4, alpha: 3 }));
    await mergeAdapter(f.base, f.adapterDir, f.out);
    const q = (await readModelWeights(f.out, (n) => n === 'model.layers.1.self_attn.q_proj.weight'))[0];
    expectClose(q.data, Float32Array.from(f.expected.get(q.name)!), { atol: 1e-7, rtol: 1e-6 });
    const plain = referenceMerge(f.baseTensors, { ...f.adapter, settings: { ...f.adapter.settings, rslora: false } }).get(q.name)!;
    expect(Math.abs(q.data[0] - plain[0])).toBeGreaterThan(1e-3); // 3/2 vs 3/4 differ
  });

  for (const [dtype, mantissa] of [['BF16', 7], ['F16', 10]] as const) {
    it(`keeps a ${dtype} base in ${dtype}: each merged value is W' rounded to the nearest ${dtype}`, async () => {
      const f = await folders(dtype);
      await mergeAdapter(f.base, f.adapterDir, f.out);
      const bytes = readFileSync(join(f.out, 'model.safetensors'));
      const header = JSON.parse(bytes.subarray(8, 8 + Number(bytes.readBigUInt64LE(0))).toString('utf8'));
      delete header.__metadata__;
      expect(new Set(Object.values(header).map((e) => (e as { dtype: string }).dtype))).toEqual(new Set([dtype]));
      expect(readFileSync(join(f.out, 'config.json'), 'utf8')).toContain(TORCH_DTYPE[dtype]);
      for (const t of await readModelWeights(f.out)) {
        const want = f.expected.get(t.name);
        if (!want) {
          expect(t.data).toEqual(f.baseTensors.find((u) => u.name === t.name)!.data);
          continue;
        }
        want.forEach((w, i) => expect(Math.abs(t.data[i] - w)).toBeLessThanOrEqual(halfUlp(w, mantissa) * (1 + 2 ** -20)));
      }
    });
  }

  it('keeps the base\'s shards and index', async () => {
    const f = await folders('F32', settings(), 2500);
    const result = await mergeAdapter(f.base, f.adapterDir, f.out);
    const shards = result.files.filter((n) => n.endsWith('.safetensors'));
    expect(shards.length).toBeGreaterThan(1);
    expect(result.files).toContain('model.safetensors.index.json');
    expect(readFileSync(join(f.out, 'model.safetensors.index.json'))).toEqual(readFileSync(join(f.base, 'model.safetensors.index.json')));
    for (const t of await readModelWeights(f.out)) {
      const want = f.expected.get(t.name);
      if (want) expectClose(t.data, Float32Array.from(want), { atol: 1e-7, rtol: 1e-6 });
    }
  });

  it('the merged folder loads and its logits are those of the base with W\' set (and not the base\'s)', async () => {
    const f = await folders();
    await mergeAdapter(f.base, f.adapterDir, f.out);
    const reference = await BuiltinPolicy.load(f.base);
    reference.setTensors(reference.getTensors().map((t) => (f.expected.has(t.name) ? { ...t, data: Float32Array.from(f.expected.get(t.name)!) } : t)));
    await reference.save(join(f.root, 'reference'));
    const [merged, expected, base] = await Promise.all([f.out, join(f.root, 'reference'), f.base].map((d) => BuiltinPolicy.load(d)));
    const sequences = [randomInts(9, 300, 1), randomInts(5, 300, 2)];
    const [m, e, b] = await Promise.all([merged, expected, base].map((p) => p.logits(sequences)));
    expectClose(m, e, { atol: 1e-5, rtol: 1e-5 });
    expect(Math.max(...m.map((v, i) => Math.abs(v - b[i])))).toBeGreaterThan(1e-3);
    expect(merged.tokenizer?.encode('merged adapters').ids).toEqual(base.tokenizer?.encode('merged adapters').ids);
    [merged, expected, base, reference].forEach((p) => p.dispose());
  });

  it('refuses an adapter for another shape, and an output folder that is the base, writing nothing', async () => {
    const f = await folders();
    const config = JSON.parse(readFileSync(join(f.base, 'config.json'), 'utf8'));
    writeFileSync(join(f.base, 'config.json'), JSON.stringify({ ...config, intermediate_size: 32 }));
    const error = await mergeAdapter(f.base, f.adapterDir, f.out).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GrpoError);
    expect((error as GrpoError).code).toBe('GRPO_SHAPE_MISMATCH');
    expect((error as GrpoError).message).toContain('"model.layers.0.mlp.down_proj.lora_A.weight" has shape [3,24] but the base model needs [3,32]');
    expect(existsSync(f.out)).toBe(false);
    await expect(mergeAdapter(f.base, f.adapterDir, f.base)).rejects.toThrow('would replace the base folder');
  });

  it('refuses a base whose weight has another shape than its config says', async () => {
    const f = await folders();
    const bad = f.baseTensors.map((t) => (t.name === 'model.layers.1.mlp.down_proj.weight' ? { ...t, shape: [24, 16] } : t));
    await writeModelWeights(f.base, bad);
    await expect(mergeAdapter(f.base, f.adapterDir, f.out)).rejects.toThrow('tensor "model.layers.1.mlp.down_proj.weight" has shape [24,16] but the adapter updates [16, 24]');
    expect(existsSync(f.out)).toBe(false);
  });
});

describe('mergeAdapter against PyTorch', () => {
  // test/fixtures/lora, written by scripts/lora-merge-reference.py: W += (B @ A) · lora_alpha / r in place, as PEFT's
  // get_delta_weight and Linear.merge do (peft/src/peft/tuners/lora/layer.py lines 1005-1033 and 915-969).
  const fixture = join(import.meta.dirname, 'fixtures', 'lora');

  for (const [dtype, ulps] of [['f32', 2 ** -22], ['bf16', 2 ** -7]] as const) {
    it(`matches PyTorch's merge of a ${dtype} base`, async () => {
      const out = join(scratch(), 'merged');
      expect((await mergeAdapter(join(fixture, `base-${dtype}`), join(fixture, 'adapter'), out)).merged).toBe(6); // without onProgress
      const torch = new Map((await readSafetensors(join(fixture, `peft-merged-${dtype}.safetensors`))).map((t) => [t.name, t.data]));
      let differing = 0, count = 0;
      for (const t of await readModelWeights(out)) {
        const want = torch.get(t.name)!;
        // float32: torch's float32 B @ A against our float64 sum; bf16: one rounding each, so at most one unit apart
        t.data.forEach((v, i) => expect(Math.abs(v - want[i])).toBeLessThanOrEqual(ulps * 2 * Math.abs(want[i]) + 1e-7));
        differing += t.data.filter((v, i) => v !== want[i]).length;
        count += t.data.length;
      }
      if (dtype === 'bf16') expect(differing).toBeLessThan(count / 20); // the rare rounding ties between float32 and float64 deltas
    });
  }
});

describe('grpo merge', () => {
  afterEach(() => vi.restoreAllMocks());

  function capture() {
    const out: string[] = [], err: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
    return { out: () => out.join(''), err: () => err.join('') };
  }

  it('merges with --base, and with the adapter\'s base_model_name_or_path when it is a local folder', async () => {
    const f = await folders();
    const io = capture();
    expect(await main(['merge', f.adapterDir, '--base', f.base, '--out', f.out])).toBe(0);
    expect(io.out()).toContain(`Merged 6 weights of ${f.base} with ${f.adapterDir} into ${f.out}`);
    expect(io.err()).toMatch(/merge.*6\/6 tensors/);
    const withBase = await readModelWeights(f.out);
    expect(await main(['merge', f.adapterDir, '--out', join(f.root, 'second'), '--quiet'])).toBe(0);
    expect(await readModelWeights(join(f.root, 'second'))).toEqual(withBase);
    const q = withBase.find((t) => t.name === 'model.layers.0.self_attn.q_proj.weight')!;
    expectClose(q.data, Float32Array.from(f.expected.get(q.name)!), { atol: 1e-7, rtol: 1e-6 });
  });

  it('says what to pass when the adapter names a Hub model, and refuses missing arguments', async () => {
    const root = scratch();
    await writeAdapter(join(root, 'adapter'), settings(), 'Qwen/Qwen2.5-0.5B');
    const io = capture();
    expect(await main(['merge', join(root, 'adapter'), '--out', join(root, 'merged')])).toBe(2);
    expect(io.err()).toContain('names base_model_name_or_path "Qwen/Qwen2.5-0.5B", which is not a local folder: give the base model\'s Hugging Face folder');
    expect(await main(['merge', join(root, 'adapter')])).toBe(2);
    expect(io.err()).toContain('Missing --out <folder>');
    expect(await main(['merge', '--out', join(root, 'merged')])).toBe(2);
    expect(io.err()).toContain('merge needs one adapter folder but received 0');
  });
});
