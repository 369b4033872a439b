// Checkpoints: the safetensors writer checked by an independent reader written here, bitwise
// round trips (weights, outputs, optimizer state → identical continued training), sharding,
// atomic replacement, and typed errors for unsupported or incomplete checkpoints.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { configFromHf, configToHf, type ModelConfig } from '../lib/policy/config.js';
import { sftLoss } from '../lib/policy/policy.js';
import { readModelWeights, writeModelWeights, writeSafetensors } from '../lib/policy/safetensors.js';
import { randomInts, randomNormal } from './helpers/random.js';

const tiny: ModelConfig = {
  vocabSize: 29, hiddenSize: 16, intermediateSize: 24, numLayers: 2, numHeads: 4, numKvHeads: 1, headDim: 4,
  maxPositions: 32, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: true, architecture: 'Qwen2ForCausalLM',
};
const batch = { prompts: [randomInts(4, 29, 1), randomInts(2, 29, 2)], completions: [randomInts(6, 29, 3), randomInts(9, 29, 4)] };
const scratch = () => mkdtempSync(join(tmpdir(), 'grpo-policy-'));

/** An independent safetensors reader: header length, JSON header, dtype/shape/offsets, alignment. */
function independentRead(path: string) {
  const bytes = readFileSync(path);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  expect(headerLength % 8).toBe(0);
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const tensors = new Map<string, Float32Array>();
  let expectedStart = 0;
  const entries = Object.entries(header).filter(([name]) => name !== '__metadata__').sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0]);
  for (const [name, e] of entries) {
    expect(e.dtype).toBe('F32');
    const [begin, end] = e.data_offsets;
    expect(begin).toBe(expectedStart); // contiguous, no gaps
    expect(end - begin).toBe(4 * e.shape.reduce((a, b) => a * b, 1));
    const data = new Float32Array(e.shape.reduce((a, b) => a * b, 1));
    new Uint8Array(data.buffer).set(bytes.subarray(8 + headerLength + begin, 8 + headerLength + end));
    tensors.set(name, data);
    expectedStart = end;
  }
  expect(8 + headerLength + expectedStart).toBe(bytes.length);
  return tensors;
}

describe('safetensors', () => {
  it('the writer produces files an independent reader decodes exactly', async () => {
    const dir = scratch();
    const tensors = [
      { name: 'a', shape: [3, 5], data: randomNormal(15, 1, 1) },
      { name: 'b.weight', shape: [7], data: randomNormal(7, 1, 2) },
      { name: 'c', shape: [1, 1], data: Float32Array.of(-0) },
    ];
    await writeSafetensors(join(dir, 'x.safetensors'), tensors);
    const read = independentRead(join(dir, 'x.safetensors'));
    for (const t of tensors) expect(read.get(t.name)).toEqual(t.data);
  });

  it('sharded weights are written with an index and read back', async () => {
    const dir = scratch();
    const tensors = Array.from({ length: 5 }, (_, i) => ({ name: `t${i}`, shape: [10, 10], data: randomNormal(100, 1, i) }));
    const files = await writeModelWeights(dir, tensors, 900);
    expect(files).toContain('model.safetensors.index.json');
    expect(files.filter((f) => f.endsWith('.safetensors')).length).toBe(3);
    const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
    expect(index.metadata.total_size).toBe(5 * 400);
    const back = await readModelWeights(dir);
    expect(back.map((t) => t.name).sort()).toEqual(tensors.map((t) => t.name));
    for (const t of tensors) expect(back.find((b) => b.name === t.name)?.data).toEqual(t.data);
  });

  it('a truncated file is a typed error', async () => {
    const dir = scratch();
    await writeSafetensors(join(dir, 'model.safetensors'), [{ name: 'a', shape: [4], data: new Float32Array(4) }]);
    const bytes = readFileSync(join(dir, 'model.safetensors'));
    writeFileSync(join(dir, 'model.safetensors'), bytes.subarray(0, bytes.length - 4));
    await expect(readModelWeights(dir)).rejects.toMatchObject({ code: 'GRPO_DATA_FORMAT', message: expect.stringContaining('"a"') });
  });
});

describe('checkpoint round trip', () => {
  it('save → load restores bitwise-identical outputs and continues training identically', async () => {
    const dir = join(scratch(), 'ckpt');
    const a = BuiltinPolicy.create(tiny, { seed: 7 });
    await a.step(batch, sftLoss());
    await a.save(dir);
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'generation_config.json', 'model.safetensors', 'optimizer.safetensors', 'trainer_state.json']);
    const weights = independentRead(join(dir, 'model.safetensors'));
    for (const t of a.getTensors()) expect(weights.get(t.name)).toEqual(t.data);
    const b = await BuiltinPolicy.load(dir);
    expect(b.config).toEqual(tiny);
    expect(await b.score(batch)).toEqual(await a.score(batch));
    const ra = await a.step(batch, sftLoss());
    const rb = await b.step(batch, sftLoss());
    expect(rb).toEqual(ra);
    expect(await b.score(batch)).toEqual(await a.score(batch));
  });

  it('saving over an existing checkpoint replaces it and leaves no temporary folders', async () => {
    const parent = scratch();
    const dir = join(parent, 'ckpt');
    const a = BuiltinPolicy.create(tiny, { seed: 1 });
    await a.save(dir);
    await a.step(batch, sftLoss());
    await a.save(dir);
    expect(readdirSync(parent)).toEqual(['ckpt']);
    expect(await (await BuiltinPolicy.load(dir)).score(batch)).toEqual(await a.score(batch));
  });

  it('unsupported architectures and missing tensors are typed errors naming them', async () => {
    expect(() => configFromHf({ architectures: ['GPT2LMHeadModel'], vocab_size: 10 }))
      .toThrow(expect.objectContaining({ code: 'GRPO_UNSUPPORTED', message: expect.stringContaining('GPT2LMHeadModel') }));
    expect(() => configFromHf({ ...configToHf(tiny), rope_scaling: { rope_type: 'longrope', short_factor: [1], long_factor: [2] } }))
      .toThrow(expect.objectContaining({ code: 'GRPO_UNSUPPORTED', message: expect.stringContaining('rope_scaling.rope_type "longrope"') }));
    const dir = join(scratch(), 'ckpt');
    await BuiltinPolicy.create(tiny).save(dir);
    const weights = (await readModelWeights(dir)).filter((t) => t.name !== 'model.layers.1.mlp.up_proj.weight');
    await writeModelWeights(dir, weights);
    await expect(BuiltinPolicy.load(dir)).rejects.toMatchObject({ code: 'GRPO_DATA_FORMAT', message: expect.stringContaining('model.layers.1.mlp.up_proj.weight') });
  });
});
