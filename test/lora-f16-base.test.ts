// A float16 checkpoint's frozen LoRA base kept in float16 (native/kernels/runtime/dtype16.h): the same bits as the
// same values in a float32 base (scores, training steps, generation, the base view, clones, saves, merges), every
// finite half bit pattern stored and read back exactly, and values beyond float16 refused as typed errors.
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LORA_TARGET_MODULES, type LoraOptions } from '../lib/options/lora.js';
import { baseDtypeOf } from '../lib/policy/base-dtype.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import type { ModelConfig } from '../lib/policy/config.js';
import { loadCheckpoint, saveCheckpoint } from '../lib/policy/checkpoint.js';
import { mergeAdapter } from '../lib/policy/lora-merge.js';
import type { SequenceBatch } from '../lib/policy/policy.js';
import { readSafetensors, toFloat32, writeModelWeights, type NamedTensor } from '../lib/policy/safetensors.js';
import { expectSameAsFloat32Base } from './helpers/base16.js';
import { expectClose } from './helpers/close.js';
import { codeOf } from './helpers/errors.js';
import { randomInts, randomNormal } from './helpers/random.js';

const lora: LoraOptions = { rank: 4, alpha: 8, dropout: 0.1, targetModules: [...LORA_TARGET_MODULES] };
const optimizer = { learningRate: 1e-2 };
const batch: SequenceBatch = {
  prompts: [randomInts(5, 50, 1), randomInts(3, 50, 2)],
  completions: [randomInts(6, 50, 3), randomInts(4, 50, 4)],
};
const weights = batch.completions.map((c, i) => randomNormal(c.length, 1, 10 + i));
const DENSE = /^model\.layers\.\d+\.(self_attn|mlp)\.\w+_proj\.weight$/;

/** The float32 bits of each tensor by name: compares -0 and +0 (and every value) by its bits. */
const bitsOf = (tensors: readonly NamedTensor[]) => [...tensors]
  .sort((a, b) => a.name.localeCompare(b.name))
  .map((t) => ({ name: t.name, bits: Array.from(new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length)) }));

/** A copy of the float32 fixture qwen2-tiny with its weights stored as F16 safetensors (a float16 checkpoint). */
async function f16Checkpoint(): Promise<string> {
  const dir = join(mkdtempSync(join(tmpdir(), 'grpo-f16-')), 'qwen2-tiny-f16');
  cpSync(join('test', 'fixtures', 'model', 'qwen2-tiny'), dir, { recursive: true });
  const { tensors } = await loadCheckpoint(dir);
  await writeModelWeights(dir, tensors, Infinity, 'F16');
  return dir;
}

describe('a float16 checkpoint\'s frozen base kept in float16', () => {
  it('computes exactly what the same values in a float32 base compute: scores, training, generation, the base view, clones, saves', async () => {
    const dir = await f16Checkpoint();
    const kept = await BuiltinPolicy.load(dir, { seed: 6, lora, optimizer });
    const { config, tensors } = await loadCheckpoint(dir);
    const wide = BuiltinPolicy.create(config, { seed: 6, lora, optimizer }); // created, then set: the base stays float32
    wide.setTensors(tensors);
    expect([kept.adapters!.baseDtype, wide.adapters!.baseDtype, kept.adapters!.baseBf16]).toEqual(['f16', 'f32', false]);
    expect(bitsOf(kept.getTensors())).toEqual(bitsOf(wide.getTensors()));
    await expectSameAsFloat32Base(kept, wide, batch, weights);
    const copy = await kept.clone();
    expect(copy.adapters!.baseDtype).toBe('f16');
    expect((await copy.score(batch)).logp).toEqual((await wide.score(batch)).logp);
    const out = mkdtempSync(join(tmpdir(), 'grpo-f16-'));
    await kept.adapters!.saveBase(join(out, 'base'));
    expect(bitsOf((await loadCheckpoint(join(out, 'base'))).tensors)).toEqual(bitsOf(tensors));
    await kept.save(join(out, 'adapter'));
    const loaded = await BuiltinPolicy.load(join(out, 'adapter'), { optimizer });
    expect(loaded.adapters!.baseDtype).toBe('f16');
    expect((await loaded.score(batch)).logp).toEqual((await wide.score(batch)).logp);
  });

  it('merges into the float16 files: untargeted tensors keep their exact values, targeted ones are rounded once to float16', async () => {
    const dir = await f16Checkpoint();
    const policy = await BuiltinPolicy.load(dir, { seed: 6, lora: { ...lora, targetModules: ['q_proj'] }, optimizer });
    const f = await policy.forward(batch);
    await policy.backward(f.handle, { gradLogp: weights });
    await policy.optimizerStep();
    const out = mkdtempSync(join(tmpdir(), 'grpo-f16-'));
    await policy.save(join(out, 'adapter'));
    await mergeAdapter(dir, join(out, 'adapter'), join(out, 'merged'));
    const [before, after] = [await readSafetensors(join(dir, 'model.safetensors')), await readSafetensors(join(out, 'merged', 'model.safetensors'))];
    const untouched = (ts: NamedTensor[]) => bitsOf(ts.filter((t) => !t.name.includes('q_proj')));
    expect(untouched(after)).toEqual(untouched(before));
    expect(baseDtypeOf(after)).toBe('f16');
    const merged = await BuiltinPolicy.load(join(out, 'merged'));
    const [a, b] = [(await merged.score(batch)).logp, (await policy.score(batch)).logp];
    a.forEach((lp, i) => expectClose(lp, b[i], { atol: 1e-3, rtol: 1e-3 }));
  });

  it('stores and reads back every finite float16 bit pattern exactly (all 63,488 of them, subnormals and -0 among them)', async () => {
    const config: ModelConfig = {
      vocabSize: 16, hiddenSize: 64, intermediateSize: 1024, numLayers: 1, numHeads: 4, numKvHeads: 4, headDim: 16,
      maxPositions: 16, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: false, architecture: 'LlamaForCausalLM',
    };
    const patterns = new Uint16Array(0x10000).map((_, i) => i).filter((h) => (h & 0x7c00) !== 0x7c00); // not Infinity or NaN
    const halves = toFloat32(Buffer.from(patterns.buffer), 'F16', patterns.length); // the reference widening (safetensors.ts)
    const source = BuiltinPolicy.create(config);
    let at = 0;
    const tensors = source.getTensors().map((t) => {
      if (!DENSE.test(t.name)) return t;
      const data = t.data.map(() => halves[at++ % halves.length]);
      return { ...t, data };
    });
    expect(at).toBeGreaterThanOrEqual(halves.length);
    const dir = join(mkdtempSync(join(tmpdir(), 'grpo-f16-')), 'patterns');
    await saveCheckpoint(dir, { config, tensors });
    await writeModelWeights(dir, tensors, Infinity, 'F16');
    const policy = await BuiltinPolicy.load(dir, { lora: { rank: 2 } });
    expect(policy.adapters!.baseDtype).toBe('f16');
    const dense = (ts: NamedTensor[]) => bitsOf(ts.filter((t) => DENSE.test(t.name)));
    expect(dense(policy.getTensors())).toEqual(dense(tensors));
  });

  it('refuses a value beyond float16\'s range in the base as a typed error (65504 is the largest it keeps)', async () => {
    const policy = await BuiltinPolicy.load(await f16Checkpoint(), { lora });
    const tensors = policy.getTensors();
    const huge = tensors.map((t) => (t.name === 'model.layers.0.mlp.up_proj.weight' ? { ...t, data: t.data.map((v, i) => (i === 5 ? 65520 : v)) } : t));
    expect(codeOf(() => policy.setTensors(huge))).toBe('GRPO_VALUE_RANGE');
    const finite = tensors.map((t) => (t.name === 'model.layers.0.mlp.up_proj.weight' ? { ...t, data: t.data.map((v, i) => (i === 5 ? 65504 : v)) } : t));
    policy.setTensors(finite);
    expect(policy.getTensors().find((t) => t.name === 'model.layers.0.mlp.up_proj.weight')!.data[5]).toBe(65504);
  });
});
