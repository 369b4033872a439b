// Per-layer activation recomputation (forward option `recompute`, trainer config "recompute"): the training forward
// keeps only each decoder layer's input and the backward recomputes the layer's activations from it with the
// forward's code. The loss, gradients (the optimizer moments), parameters and adapters after two micro-batched updates
// are bitwise those without it, for full fine-tuning and LoRA with dropout (masks redrawn from the forward's key),
// on 1 and 2 threads; on an addon without the method (the CUDA one) it is refused.
import { describe, expect, it } from 'vitest';
import { MODEL_METHODS, native, setCudaLoadForTests, type CudaBinding } from '../lib/binding/index.js';
import { GrpoError } from '../lib/errors.js';
import { LORA_TARGET_MODULES, type LoraOptions } from '../lib/options/lora.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import type { ModelConfig } from '../lib/policy/config.js';
import type { SequenceBatch } from '../lib/policy/policy.js';
import { setThreads } from '../lib/runtime.js';
import { trainStep } from '../lib/trainer/loop.js';
import { microBatchRanges } from '../lib/trainer/micro-batch.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { rowMask } from '../lib/trainer/rollout.js';
import { createTask } from '../lib/trainer/tasks.js';
import { accumulateGradients, type UpdateBatch } from '../lib/trainer/update.js';
import { randomInts, randomNormal } from './helpers/random.js';
import { tinyConfig, tinyMoviesDir, tinyTokenizer } from './helpers/trainer.js';

// Qwen3-style (per-head q/k norms) with three layers: the first two recomputed, the last one's activations
// still in the reused buffers from the forward.
const tiny: ModelConfig = {
  vocabSize: 41, hiddenSize: 32, intermediateSize: 48, numLayers: 3, numHeads: 4, numKvHeads: 2, headDim: 8, maxPositions: 64,
  rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: false, qkNorm: true, architecture: 'Qwen3ForCausalLM',
};
const LORA: LoraOptions = { rank: 4, alpha: 8, dropout: 0.2, targetModules: [...LORA_TARGET_MODULES] };
const B = 6;

/** Six prompts and completions of 3–12 tokens, advantages of both signs, and a budget that makes at least three micro-batches. */
function update(): { update: UpdateBatch; budget: number } {
  const prompts = Array.from({ length: B }, (_, b) => randomInts(3 + (b % 4), tiny.vocabSize, 10 + b));
  const completions = Array.from({ length: B }, (_, b) => randomInts(3 + ((5 * b) % 10), tiny.vocabSize, 20 + b));
  const lengths = completions.map((c) => c.length), width = Math.max(...lengths);
  const advantages = randomNormal(B * width, 1, 7);
  const batch: SequenceBatch = { prompts, completions };
  const tokens = prompts.reduce((n, p, b) => n + p.length + lengths[b], 0);
  const budget = Math.ceil(tokens / 3);
  return { update: { batch, rollout: { completions, width }, signal: { advantages, lossMask: rowMask(lengths, width) }, stored: {} }, budget };
}

/** Float32 arrays as their bits (a bitwise comparison: -0 and NaN payloads included). */
const bits = (arrays: readonly Float32Array[]) => arrays.map((a) => new Uint32Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength)));

/** Losses, moments, parameters and adapters after two micro-batched updates (one optimizer step each). */
async function train(recompute: boolean, lora: LoraOptions | undefined, threads: number) {
  setThreads(threads);
  const policy = BuiltinPolicy.create(tiny, { seed: 4, optimizer: { maxGradNorm: 0 }, ...(lora ? { lora } : {}) });
  const { update: u, budget } = update();
  expect(microBatchRanges(u.batch, budget).length).toBeGreaterThanOrEqual(3);
  const losses: number[] = [];
  for (let step = 0; step < 2; step++) {
    const out = await accumulateGradients(policy, u, { loss: { aggregation: 'seqMeanTokenMean' }, microBatchTokens: budget, recompute, temperature: 1 });
    await policy.optimizerStep({ learningRate: 1e-2 });
    losses.push(out.loss);
  }
  const { m, v } = policy.getOptimizerState();
  const tensors = policy.getTensors().map((t) => t.data);
  const adapters = lora ? policy.getAdapterTensors().map((t) => t.data) : [];
  policy.dispose();
  return { losses, moments: bits([m, v]), tensors: bits(tensors), adapters: bits(adapters), m };
}

describe('recompute: the same update in less memory', () => {
  it.each([
    ['full fine-tuning', undefined],
    ['LoRA on every module with dropout 0.2', LORA],
  ] as const)('%s: loss, moments, parameters and adapters after two micro-batched updates are bitwise equal, on 1 and 2 threads', async (_, lora) => {
    try {
      for (const threads of [1, 2]) {
        const kept = await train(false, lora, threads);
        const recomputed = await train(true, lora, threads);
        expect(kept.m.some((x) => x !== 0)).toBe(true); // the gradients are not trivially equal
        expect(recomputed.losses).toEqual(kept.losses);
        expect(recomputed.moments).toEqual(kept.moments);
        expect(recomputed.tensors).toEqual(kept.tensors);
        expect(recomputed.adapters).toEqual(kept.adapters);
      }
    } finally {
      setThreads(0);
    }
  });

  it('policy.step takes it too, and a model on an addon without it (the CUDA one) refuses it: GRPO_UNSUPPORTED', async () => {
    const cpu = native();
    const methods = Object.fromEntries(MODEL_METHODS.map((name) => [name, (cpu[name] as (...a: unknown[]) => unknown).bind(cpu)]));
    const binding = { ...methods, cudaProbe: () => ({ ok: true, deviceCount: 1, error: 0, message: 'stand-in' }) } as unknown as CudaBinding;
    setCudaLoadForTests({ binding, reason: 'stand-in CUDA addon (model methods, no recomputation)' });
    const batch: SequenceBatch = { prompts: [randomInts(4, tiny.vocabSize, 1)], completions: [randomInts(5, tiny.vocabSize, 2)] };
    const loss = () => ({ loss: 0, gradLogp: [new Float32Array(5).fill(-1)] });
    try {
      const cuda = BuiltinPolicy.create(tiny, { device: 'cuda' });
      const error = await cuda.forward(batch, { recompute: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GrpoError);
      expect(error).toMatchObject({ code: 'GRPO_UNSUPPORTED', message: expect.stringMatching(/CPU model only.*"cuda"/) });
      await expect(cuda.step(batch, loss, { recompute: false })).resolves.toBeDefined();
      await expect(BuiltinPolicy.create(tiny).step(batch, loss, { recompute: true })).resolves.toBeDefined();
    } finally {
      setCudaLoadForTests(undefined);
    }
  });
});

describe('config "recompute" in the trainer step', () => {
  it('every training forward of the step gets it, and the step\'s loss and parameters are bitwise those without it', async () => {
    const moviesDir = tinyMoviesDir([1, 2], 1);
    const records = [], params = [];
    for (const recompute of [false, true]) {
      const config = resolveConfig({
        recipe: 'remark', groups: 2, candidates: 3, learningRate: 1e-2, microBatchTokens: 250, recompute, generation: { maxNewTokens: 12 },
        rewards: { ranks: 3, catalog: 'none' }, data: { moviesDir },
      });
      expect(config.recompute).toBe(recompute);
      const policy = BuiltinPolicy.create({ ...tinyConfig(tinyTokenizer().vocabSize), numLayers: 2 }, { seed: 1, tokenizer: tinyTokenizer() });
      const seen: (boolean | undefined)[] = [];
      const forward = policy.forward.bind(policy);
      policy.forward = (batch, options) => (seen.push(options?.recompute), forward(batch, options));
      // fixed advantages (the tiny model's rewards are all zero): b mod 3 − 0.5 on row b
      const real = createTask(config, policy.tokenizer!);
      const task = { ...real, advantages: (rewards: Parameters<typeof real.advantages>[0], rollout: Parameters<typeof real.advantages>[1]) => {
        const { signal, stats } = real.advantages(rewards, rollout);
        return { signal: { ...signal, advantages: Float32Array.from(rollout.mask, (m, i) => m * ((Math.floor(i / rollout.width) % 3) - 0.5)) }, stats };
      } };
      records.push(await trainStep({ config, policy, reference: await policy.clone(), task, lossOptions: config.loss }, 0, 0));
      params.push(bits(policy.getTensors().map((t) => t.data)));
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((r) => r === recompute)).toBe(true);
      policy.dispose();
    }
    expect(records[0].loss).not.toBe(0);
    expect(records[1].loss).toBe(records[0].loss);
    expect(params[1]).toEqual(params[0]);
  });
});
