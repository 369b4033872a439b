// LoRA adapters on the built-in policy: finite-difference gradients of A and B (dropout off and on; the layer-0
// adapters' gradients reach them through layer 1's adapted modules, so they check dx of an adapted layer too), the
// base frozen bit for bit, adapters off and B = 0 at init equal the base bit for bit, thread-count identity, save →
// load in PEFT's names, merge, the PyTorch fixture of a LoRA forward, and bad options as typed errors.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODEL_METHODS, native, setCudaLoadForTests, type CudaBinding } from '../lib/binding/index.js';
import { GrpoError } from '../lib/errors.js';
import { LORA_TARGET_MODULES, type LoraOptions } from '../lib/options/lora.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import type { ModelConfig } from '../lib/policy/config.js';
import { loadCheckpoint } from '../lib/policy/checkpoint.js';
import { loadAdapter, loraTensorShapes } from '../lib/policy/lora-format.js';
import { mergeAdapter } from '../lib/policy/lora-merge.js';
import type { ScoreResult, SequenceBatch } from '../lib/policy/policy.js';
import { readSafetensors } from '../lib/policy/safetensors.js';
import { setThreads } from '../lib/runtime.js';
import { expectSameAsFloat32Base } from './helpers/base16.js';
import { expectClose } from './helpers/close.js';
import { randomInts, randomNormal as randomFloats } from './helpers/random.js';

const tiny: ModelConfig = {
  vocabSize: 37, hiddenSize: 32, intermediateSize: 48, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 8,
  maxPositions: 64, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: true, architecture: 'Qwen2ForCausalLM',
};
const ALL: LoraOptions = { rank: 4, alpha: 8, dropout: 0, targetModules: [...LORA_TARGET_MODULES] };
const batch: SequenceBatch = {
  prompts: [randomInts(5, 37, 1), randomInts(3, 37, 2)],
  completions: [randomInts(6, 37, 3), randomInts(4, 37, 4)],
};
const weights = batch.completions.map((c, i) => randomFloats(c.length, 1, 10 + i));
/** AdamW with β1 = 0, no clipping and lr 0 leaves the gradient as the first moment: the gradient probe. */
const probe = { beta1: 0, maxGradNorm: 0, weightDecay: 0 };

/** `call` throws (or rejects with) a GrpoError of `code` whose message matches `message`. */
async function fails(call: () => unknown, code: string, message?: RegExp): Promise<void> {
  let error: unknown;
  try {
    await call();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(GrpoError);
  expect((error as GrpoError).code).toBe(code);
  if (message) expect((error as Error).message).toMatch(message);
}

const lossOf = (s: ScoreResult) => s.logp.reduce((sum, lp, i) => sum + lp.reduce((a, v, t) => a + weights[i][t] * v, 0), 0);

/** A LoRA policy with random non-zero B (so that A's gradient is not zero too). */
function adapted(lora: LoraOptions = ALL, seed = 3): BuiltinPolicy {
  const policy = BuiltinPolicy.create(tiny, { seed, lora, optimizer: probe });
  policy.setAdapterTensors(policy.getAdapterTensors().map((t, i) => (t.name.endsWith('lora_B.weight') ? { ...t, data: randomFloats(t.data.length, 0.3, 50 + i) } : t)));
  return policy;
}

/** The adapters' gradient of Σ w·logp (train-mode forward, so with dropout), read through the probe. */
async function gradient(policy: BuiltinPolicy): Promise<Float32Array> {
  const state = policy.getOptimizerState();
  policy.setOptimizerState(state); // the forward count since the step, which keys the masks, back to 0
  const f = await policy.forward(batch);
  await policy.backward(f.handle, { gradLogp: weights });
  await policy.optimizerStep({ learningRate: 0 });
  const grad = policy.getOptimizerState().m;
  policy.setOptimizerState(state); // the step count keys the dropout masks: back to where the forward ran
  return grad;
}

/** Central differences of `loss` at a few elements of every adapter tensor against `grad`. */
async function checkFiniteDifferences(policy: BuiltinPolicy, grad: Float32Array, loss: () => Promise<number>): Promise<void> {
  const tensors = policy.getAdapterTensors();
  let offset = 0, checked = 0;
  for (const t of tensors) {
    for (const e of [0, t.data.length >> 1, t.data.length - 1]) {
      const h = 2e-3, saved = t.data[e];
      const at = async (value: number) => {
        t.data[e] = value;
        policy.setAdapterTensors([t]);
        return loss();
      };
      const numeric = ((await at(saved + h)) - (await at(saved - h))) / (2 * h);
      await at(saved);
      expect(Math.abs(grad[offset + e] - numeric), `${t.name}[${e}]`).toBeLessThan(2e-3 + 2e-2 * Math.abs(numeric));
      checked += Number(numeric !== 0);
    }
    offset += t.data.length;
  }
  expect(checked).toBeGreaterThan(tensors.length); // the gradients are not all zero
}

describe('LoRA gradients', () => {
  it('A and B of every target module match finite differences (no dropout)', async () => {
    const policy = adapted();
    await checkFiniteDifferences(policy, await gradient(policy), async () => lossOf(await policy.score(batch)));
  });

  it('with dropout: the training forward draws one mask per (step, forward), and its backward goes through that mask', async () => {
    const policy = adapted({ ...ALL, dropout: 0.3 });
    const state = policy.getOptimizerState();
    const trainLoss = async () => {
      policy.setOptimizerState(state); // the same step and forward count: the same masks
      return lossOf((await policy.forward(batch)).scores);
    };
    const first = await trainLoss();
    expect(await trainLoss()).toBe(first);
    expect(first).not.toBe(lossOf(await policy.score(batch))); // scoring applies no dropout
    await checkFiniteDifferences(policy, await gradient(policy), trainLoss);
  });
});

describe('LoRA leaves the base as it is', () => {
  it('B = 0 at init: scores and generations equal the base model bit for bit', async () => {
    const base = BuiltinPolicy.create(tiny, { seed: 3 });
    const lora = BuiltinPolicy.create(tiny, { seed: 3, lora: { targetModules: ['q_proj', 'v_proj', 'down_proj'] } });
    expect((await lora.score(batch)).logp).toEqual((await base.score(batch)).logp);
    const gen = { maxNewTokens: 6, seed: 4 };
    expect((await lora.generate(batch.prompts, gen)).map((g) => g.tokens)).toEqual((await base.generate(batch.prompts, gen)).map((g) => g.tokens));
  });

  it('adapters.base() is the base bit for bit (no copy); training moves the adapters and leaves the base unchanged', async () => {
    const base = BuiltinPolicy.create(tiny, { seed: 3 });
    const baseScores = (await base.score(batch)).logp;
    const lora = BuiltinPolicy.create(tiny, { seed: 3, lora: ALL, optimizer: { learningRate: 1e-2 } });
    const view = lora.adapters!.base();
    const losses: number[] = [];
    for (let s = 0; s < 4; s++) {
      const f = await lora.forward(batch);
      losses.push(-lossOf(f.scores));
      await lora.backward(f.handle, { gradLogp: weights.map((w) => w.map((x) => -x)) });
      await lora.optimizerStep();
      expect((await view.score(batch)).logp).toEqual(baseScores);
    }
    expect(losses[3]).toBeLessThan(losses[0]);
    expect(lora.getTensors()).toEqual(base.getTensors());
    expect((await lora.score(batch)).logp).not.toEqual(baseScores);
    expect(view.adapters).toBeUndefined();
    await fails(() => view.forward(batch), 'GRPO_UNSUPPORTED');
    view.dispose(); // the view's dispose leaves the model alone
    expect((await lora.score(batch)).logp[0].length).toBe(6);
  });

  it('generation runs the adapters: KV-cache log-probs equal scoring the whole sequence; the base view generates the base', async () => {
    const policy = adapted();
    const out = await policy.generate(batch.prompts, { maxNewTokens: 10, seed: 9 });
    const scored = await policy.score({ prompts: batch.prompts, completions: out.map((g) => g.tokens) });
    out.forEach((g, i) => expectClose(g.logp, scored.logp[i], { atol: 2e-5, rtol: 1e-4 }));
    const base = BuiltinPolicy.create(tiny, { seed: 3 });
    const greedy = { maxNewTokens: 10, temperature: 0 };
    expect((await policy.adapters!.base().generate(batch.prompts, greedy)).map((g) => g.logp)).toEqual((await base.generate(batch.prompts, greedy)).map((g) => g.logp));
  });

  it('trains to the same bits with 1 and 2 threads (dropout masks included)', async () => {
    const run = async (threads: number) => {
      setThreads(threads);
      const policy = BuiltinPolicy.create(tiny, { seed: 5, lora: { ...ALL, dropout: 0.2 }, optimizer: { learningRate: 1e-2 } });
      for (let s = 0; s < 3; s++) {
        const f = await policy.forward(batch);
        await policy.backward(f.handle, { gradLogp: weights });
        await policy.optimizerStep();
      }
      return { tensors: policy.getAdapterTensors(), optimizer: policy.getOptimizerState() };
    };
    try {
      expect(await run(1)).toEqual(await run(2));
    } finally {
      setThreads(2);
    }
  });
});

describe('LoRA checkpoints', () => {
  it('save writes the adapter in PEFT names with its optimizer; load gives back base + adapter exactly; merge matches', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grpo-lora-'));
    const policy = BuiltinPolicy.create(tiny, { seed: 2, lora: { ...ALL, rank: 2, dropout: 0.1 }, optimizer: { learningRate: 1e-2 } });
    for (let s = 0; s < 2; s++) {
      const f = await policy.forward(batch);
      await policy.backward(f.handle, { gradLogp: weights });
      await policy.optimizerStep();
    }
    await policy.adapters!.saveBase(join(dir, 'base'));
    await policy.save(join(dir, 'adapter'));
    expect(existsSync(join(dir, 'adapter', 'config.json'))).toBe(false);
    const config = JSON.parse(readFileSync(join(dir, 'adapter', 'adapter_config.json'), 'utf8'));
    expect(config).toMatchObject({ peft_type: 'LORA', r: 2, lora_alpha: 8, lora_dropout: 0.1, base_model_name_or_path: join(dir, 'base') });
    const names = (await readSafetensors(join(dir, 'adapter', 'adapter_model.safetensors'))).map((t) => t.name);
    expect(names).toEqual(loraTensorShapes(tiny, { rank: 2, targetModules: [...LORA_TARGET_MODULES] }).map((t) => `base_model.model.${t.name}`));
    expect((await loadAdapter(join(dir, 'adapter'), tiny)).tensors).toEqual(policy.getAdapterTensors());

    const loaded = await BuiltinPolicy.load(join(dir, 'adapter'), { optimizer: { learningRate: 1e-2 } }); // the schedule is the caller's
    expect(loaded.adapters!.settings).toEqual(policy.adapters!.settings);
    expect(loaded.getTensors()).toEqual(policy.getTensors());
    expect(loaded.getOptimizerState()).toEqual(policy.getOptimizerState());
    expect((await loaded.score(batch)).logp).toEqual((await policy.score(batch)).logp);
    // the next training step (its dropout masks too) is the same after the round trip
    for (const p of [policy, loaded]) {
      const f = await p.forward(batch);
      await p.backward(f.handle, { gradLogp: weights });
      await p.optimizerStep();
    }
    expect(loaded.getAdapterTensors()).toEqual(policy.getAdapterTensors());

    await policy.save(join(dir, 'adapter'));
    await mergeAdapter(join(dir, 'base'), join(dir, 'adapter'), join(dir, 'merged'));
    const merged = await BuiltinPolicy.load(join(dir, 'merged'));
    expect(merged.adapters).toBeUndefined();
    const [a, b] = [(await merged.score(batch)).logp, (await policy.score(batch)).logp];
    a.forEach((lp, i) => expectClose(lp, b[i], { atol: 2e-5, rtol: 1e-4 }));
  });

  it('matches PyTorch: a LoRA forward on qwen2-tiny (all seven modules, r 4) as PEFT computes it, the adapter loaded with lora.from', async () => {
    const fixture = join('test', 'fixtures', 'lora-forward');
    const expected = JSON.parse(readFileSync(join(fixture, 'expected.json'), 'utf8')) as { base: string; sequences: { tokens: number[]; logits: number[][] }[] };
    const policy = await BuiltinPolicy.load(join('test', 'fixtures', 'model', expected.base), { lora: { from: join(fixture, 'adapter') } });
    expect(policy.adapters!.settings).toEqual({ rank: 4, alpha: 8, dropout: 0, targetModules: [...LORA_TARGET_MODULES], rslora: false });
    for (const s of expected.sequences) {
      const logits = await policy.logits([Int32Array.from(s.tokens)]);
      expectClose(logits, Float32Array.from(s.logits.flat()), { atol: 2e-5, rtol: 1e-4 });
    }
  });
});

describe('a bfloat16 checkpoint\'s frozen base kept in bfloat16', () => {
  const dir = join('test', 'fixtures', 'model', 'qwen2.5-0.5b-tiny'); // model.safetensors in BF16
  const lora: LoraOptions = { ...ALL, dropout: 0.1 };
  const optimizer = { learningRate: 1e-2 };

  it('computes exactly what the same base in float32 computes: scores, generation, training, the base view, clones, saves', async () => {
    const kept = await BuiltinPolicy.load(dir, { seed: 6, lora, optimizer });
    const { config, tensors } = await loadCheckpoint(dir);
    const wide = BuiltinPolicy.create(config, { seed: 6, lora, optimizer }); // created, then set: the base stays float32
    wide.setTensors(tensors);
    expect([kept.adapters!.baseDtype, wide.adapters!.baseDtype, kept.adapters!.baseBf16]).toEqual(['bf16', 'f32', true]);
    expect(kept.getTensors()).toEqual(wide.getTensors());
    await expectSameAsFloat32Base(kept, wide, batch, weights);
    expect((await (await kept.clone()).score(batch)).logp).toEqual((await wide.score(batch)).logp);
    const out = mkdtempSync(join(tmpdir(), 'grpo-lora-'));
    await kept.adapters!.saveBase(join(out, 'base'));
    await kept.save(join(out, 'adapter'));
    const loaded = await BuiltinPolicy.load(join(out, 'adapter'), { optimizer });
    expect(loaded.adapters!.baseDtype).toBe('bf16');
    expect((await loaded.score(batch)).logp).toEqual((await wide.score(batch)).logp);
  });

  it('a float32 checkpoint keeps its base in float32', async () => {
    const policy = await BuiltinPolicy.load(join('test', 'fixtures', 'model', 'qwen2-tiny'), { lora });
    expect([policy.adapters!.baseDtype, policy.adapters!.baseBf16]).toEqual(['f32', false]);
  });
});

describe('LoRA errors', () => {
  it('bad options and policies that cannot take LoRA are typed errors naming what is wrong', async () => {
    await fails(() => BuiltinPolicy.create(tiny, { lora: { rank: 0 } }), 'GRPO_VALUE_RANGE', /lora rank/);
    await fails(() => BuiltinPolicy.create(tiny, { lora: { targetModules: ['q_proj', 'lm_head' as never] } }), 'GRPO_VALUE_RANGE', /targetModules\[1\]/);
    await fails(() => BuiltinPolicy.create(tiny, { lora: { rank: 40 } }), 'GRPO_VALUE_RANGE', /smallest adapted dimension/);
    await fails(() => BuiltinPolicy.create(tiny, { lora: { ranks: 4 } as never }), 'GRPO_UNKNOWN_OPTION', /ranks/);
    await fails(() => BuiltinPolicy.create(tiny).setAdapterTensors([]), 'GRPO_INVALID_ARGUMENT', /no LoRA adapters/);
    const dir = mkdtempSync(join(tmpdir(), 'grpo-lora-'));
    const policy = BuiltinPolicy.create(tiny, { lora: { rank: 2 } });
    await policy.save(join(dir, 'adapter'));
    await fails(() => BuiltinPolicy.load(join(dir, 'adapter')), 'GRPO_INVALID_ARGUMENT', /base_model_name_or_path/);
    await policy.adapters!.saveBase(join(dir, 'base'));
    await policy.save(join(dir, 'adapter'));
    await fails(() => BuiltinPolicy.load(join(dir, 'adapter'), { lora: { rank: 4 } }), 'GRPO_INVALID_ARGUMENT', /other settings/);
  });

  it('a model on an addon without the LoRA methods (the CUDA one) refuses adapters: GRPO_UNSUPPORTED', async () => {
    const cpu = native();
    const methods = Object.fromEntries(MODEL_METHODS.map((name) => [name, (cpu[name] as (...a: unknown[]) => unknown).bind(cpu)]));
    const binding = { ...methods, cudaProbe: () => ({ ok: true, deviceCount: 1, error: 0, message: 'stand-in' }) } as unknown as CudaBinding;
    setCudaLoadForTests({ binding, reason: 'stand-in CUDA addon (model methods, no LoRA)' });
    try {
      await fails(() => BuiltinPolicy.create(tiny, { device: 'cuda', lora: { rank: 2 } }), 'GRPO_UNSUPPORTED', /CPU model only.*"cuda"/);
    } finally {
      setCudaLoadForTests(undefined);
    }
  });
});
