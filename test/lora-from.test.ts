// Starting LoRA adapters from an adapter folder in PEFT's format (`BuiltinPolicy.load(base, { lora: { from } })`):
// save → load gives the same scores bit for bit and the same next training step as the same tensors set by hand,
// adapters stored in bf16 / f16 with target_modules as a pattern load as their rounded values, and every mismatch
// with the base or the given settings is a typed error naming what is wrong.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LoraOptions } from '../lib/options/lora.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import type { ModelConfig } from '../lib/policy/config.js';
import { saveAdapter } from '../lib/policy/lora-format.js';
import type { SequenceBatch } from '../lib/policy/policy.js';
import { fromFloat32, toFloat32, type WeightDtype } from '../lib/policy/safetensors.js';
import { GrpoError } from '../lib/errors.js';
import { randomInts, randomNormal } from './helpers/random.js';

const tiny: ModelConfig = {
  vocabSize: 37, hiddenSize: 32, intermediateSize: 48, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 8,
  maxPositions: 64, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: true, architecture: 'Qwen2ForCausalLM',
};
const LORA: LoraOptions = { rank: 2, alpha: 8, dropout: 0.1, targetModules: ['q_proj', 'v_proj', 'down_proj'] };
const batch: SequenceBatch = { prompts: [randomInts(5, 37, 1), randomInts(3, 37, 2)], completions: [randomInts(6, 37, 3), randomInts(4, 37, 4)] };
const weights = batch.completions.map((c, i) => randomNormal(c.length, 1, 10 + i));
const optimizer = { learningRate: 1e-2 };

/** `promise` rejects with a GrpoError of `code` whose message contains (or matches) `message`. */
async function expectError(promise: Promise<unknown>, code: string, message: string | RegExp): Promise<void> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(GrpoError);
  expect((error as GrpoError).code).toBe(code);
  if (typeof message === 'string') expect((error as Error).message).toContain(message);
  else expect((error as Error).message).toMatch(message);
}

async function trainStep(policy: BuiltinPolicy): Promise<void> {
  const f = await policy.forward(batch);
  await policy.backward(f.handle, { gradLogp: weights });
  await policy.optimizerStep();
}

describe('lora.from: adapters that start from an adapter folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'grpo-lora-from-'));
  const base = join(dir, 'base'), adapter = join(dir, 'adapter');
  let trained: BuiltinPolicy;

  beforeAll(async () => {
    trained = BuiltinPolicy.create(tiny, { seed: 2, lora: LORA, optimizer });
    for (let s = 0; s < 2; s++) await trainStep(trained);
    await trained.adapters!.saveBase(base);
    await trained.save(adapter);
  });

  it('save → load on the base: the same settings and scores bit for bit, fresh moments, saves naming that base', async () => {
    const loaded = await BuiltinPolicy.load(base, { lora: { from: adapter }, optimizer });
    expect(loaded.adapters!.settings).toEqual(trained.adapters!.settings);
    expect(loaded.adapters!.baseFolder).toBe(resolve(base));
    expect(loaded.getAdapterTensors()).toEqual(trained.getAdapterTensors());
    expect((await loaded.score(batch)).logp).toEqual((await trained.score(batch)).logp);
    expect(loaded.getOptimizerState().m.every((x) => x === 0)).toBe(true);
    await loaded.save(join(dir, 'again'));
    expect(JSON.parse(readFileSync(join(dir, 'again', 'adapter_config.json'), 'utf8')).base_model_name_or_path).toBe(resolve(base));
  });

  it('training continues from it: the same steps as the same tensors set by hand on new adapters, the base untouched', async () => {
    const loaded = await BuiltinPolicy.load(base, { lora: { from: adapter }, seed: 5, optimizer });
    const byHand = await BuiltinPolicy.load(base, { lora: LORA, seed: 5, optimizer });
    byHand.setAdapterTensors(trained.getAdapterTensors());
    const start = loaded.getAdapterTensors();
    for (let s = 0; s < 2; s++) for (const p of [loaded, byHand]) await trainStep(p);
    expect(loaded.getAdapterTensors()).toEqual(byHand.getAdapterTensors());
    expect(loaded.getAdapterTensors()).not.toEqual(start);
    expect(loaded.getTensors()).toEqual(trained.getTensors());
  });

  it('dropout may be given beside from (it replaces lora_dropout); the other fields may only repeat the adapter\'s', async () => {
    const repeated = await BuiltinPolicy.load(base, { lora: { from: adapter, rank: 2, targetModules: ['down_proj', 'q_proj', 'v_proj'], dropout: 0 } });
    expect(repeated.adapters!.settings).toEqual({ ...trained.adapters!.settings, dropout: 0 });
    await expectError(BuiltinPolicy.load(base, { lora: { from: adapter, rank: 4 } }), 'GRPO_INVALID_ARGUMENT',
      `BuiltinPolicy.load lora rank is 4 but the adapter ${adapter} has 2; leave it out to take the adapter's`);
    await expectError(BuiltinPolicy.load(base, { lora: { from: adapter, targetModules: ['q_proj'] } }), 'GRPO_INVALID_ARGUMENT', /lora targetModules is \["q_proj"\]/);
    await expectError(BuiltinPolicy.load(base, { lora: { from: adapter, rslora: true } }), 'GRPO_INVALID_ARGUMENT', /lora rslora is true/);
  });

  for (const dtype of ['BF16', 'F16'] as WeightDtype[]) {
    it(`reads PEFT's files stored in ${dtype}, target_modules a pattern: each tensor its ${dtype} value, widened exactly`, async () => {
      const folder = join(dir, `peft-${dtype}`);
      const tensors = trained.getAdapterTensors();
      await saveAdapter(folder, { settings: trained.adapters!.settings, baseModel: 'Qwen/Qwen2.5-0.5B', tensors }, dtype);
      const configPath = join(folder, 'adapter_config.json');
      writeFileSync(configPath, JSON.stringify({ ...JSON.parse(readFileSync(configPath, 'utf8')), target_modules: '.*\\.(q_proj|v_proj|down_proj)' }));
      const loaded = await BuiltinPolicy.load(base, { lora: { from: folder } });
      const rounded = tensors.map((t) => ({ ...t, data: toFloat32(fromFloat32(t.data, dtype), dtype, t.data.length) }));
      expect(loaded.getAdapterTensors()).toEqual(rounded);
      expect(loaded.adapters!.baseFolder).toBe(resolve(base)); // the base given, not the Hub name the file holds
      const byHand = await BuiltinPolicy.load(base, { lora: LORA });
      byHand.setAdapterTensors(rounded);
      expect((await loaded.score(batch)).logp).toEqual((await byHand.score(batch)).logp);
    });
  }

  it('an adapter for another base names the tensor; PEFT features not implemented name the field', async () => {
    const wider = BuiltinPolicy.create({ ...tiny, intermediateSize: 64 }, { lora: LORA });
    const other = join(dir, 'other-base');
    await wider.adapters!.saveBase(join(dir, 'wider-base'));
    await wider.save(other);
    await expectError(BuiltinPolicy.load(base, { lora: { from: other } }), 'GRPO_SHAPE_MISMATCH',
      '"model.layers.0.mlp.down_proj.lora_A.weight" has shape [2,64] but the base model needs [2,48]');
    const saved = JSON.parse(readFileSync(join(adapter, 'adapter_config.json'), 'utf8'));
    for (const [field, value] of [['modules_to_save', ['lm_head']], ['fan_in_fan_out', true], ['bias', 'lora_only']] as const) {
      const folder = join(dir, `unsupported-${field}`);
      await saveAdapter(folder, { settings: trained.adapters!.settings, tensors: trained.getAdapterTensors() });
      writeFileSync(join(folder, 'adapter_config.json'), JSON.stringify({ ...saved, [field]: value }));
      await expectError(BuiltinPolicy.load(base, { lora: { from: folder } }), 'GRPO_UNSUPPORTED', `${field} = ${JSON.stringify(value)} is not supported`);
    }
  });

  it('from needs a base model folder, an adapter folder, and load', async () => {
    await expectError(BuiltinPolicy.load(adapter, { lora: { from: adapter } }), 'GRPO_INVALID_ARGUMENT', /is an adapter folder; lora.from starts adapters on a base/);
    await expectError(BuiltinPolicy.load(base, { lora: { from: join(dir, 'nowhere') } }), 'GRPO_INVALID_ARGUMENT', /a LoRA adapter folder in PEFT's format/);
    await expectError(BuiltinPolicy.load(base, { lora: { from: 3 as never } }), 'GRPO_INVALID_ARGUMENT', /Expected a string for BuiltinPolicy.load lora from/);
    expect(() => BuiltinPolicy.create(tiny, { lora: { from: adapter } })).toThrow(/BuiltinPolicy.create lora.from: only load starts adapters/);
  });
});
