// The trainer with LoRA on a random Qwen2.5-0.5B-shaped checkpoint (its real config.json, tiny sizes, loaded from a
// Hugging Face folder): a few ReMaRk steps move the adapters while the base stays bit for bit, the KL reference is
// the base with adapters off (no reference/ copy), checkpoints are adapter-only in PEFT's format, a resumed run logs
// what an uninterrupted one logs, `grpo train --lora.*` and `grpo merge <checkpoint>/policy` run end to end.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../lib/cli/main.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { loadCheckpoint } from '../lib/policy/checkpoint.js';
import { configFromHf } from '../lib/policy/config.js';
import type { TrainerConfig } from '../lib/trainer/config.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { resume } from '../lib/trainer/resume.js';
import { recommendExamples, sft } from '../lib/trainer/sft.js';
import { moviesData } from '../lib/trainer/tasks.js';
import { train, type TrainerEvent } from '../lib/trainer/train.js';
import { tempRunRoot, tinyMoviesDir, tinyTokenizer } from './helpers/trainer.js';

const loadPolicy = (dir: string) => BuiltinPolicy.load(dir);
const LORA = { rank: 4, alpha: 8, dropout: 0.05, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };

function config(moviesDir: string): TrainerConfig {
  return resolveConfig({
    recipe: 'remark', seed: 7, steps: 4, groups: 2, candidates: 3, learningRate: 2e-2, checkpointEvery: 2, testPrompts: 2,
    generation: { maxNewTokens: 32, temperature: 0.8 }, rewards: { ranks: 3, catalog: 'benchmark' },
    validation: { every: 2, prompts: 2, metric: 'unionRecall', patience: 0 },
    data: { moviesDir }, lora: LORA as never,
  });
}

function outcome(runDir: string) {
  const rows = (file: string) => readFileSync(join(runDir, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const metrics = rows('metrics.jsonl').map(({ time: _time, elapsed: _elapsed, ...rest }) => rest);
  const validation = rows('validation.jsonl').map(({ elapsed: _elapsed, ...rest }) => rest);
  return { metrics, validation, test: JSON.parse(readFileSync(join(runDir, 'test.json'), 'utf8')) };
}

describe('train with LoRA', () => {
  const moviesDir = tinyMoviesDir([1, 2, 1], 2);
  const root = tempRunRoot();
  const baseDir = join(root, 'base', 'policy');
  const c = config(moviesDir);

  beforeAll(async () => {
    // the real Qwen2.5-0.5B config.json at tiny sizes (qkv bias, tied embeddings, GQA), a BPE vocabulary, and a short
    // full SFT so that completions hold items and rewards vary: the starting checkpoint, as a Hugging Face folder
    const hf = JSON.parse(readFileSync(join('test', 'fixtures', 'model', 'qwen2.5-0.5b-tiny', 'config.json'), 'utf8'));
    const tokenizer = tinyTokenizer();
    const shape = { ...configFromHf(hf), vocabSize: tokenizer.vocabSize, maxPositions: 256 };
    const policy = BuiltinPolicy.create(shape, { seed: 1, tokenizer });
    await sft(policy, recommendExamples(moviesData(moviesDir), 3), { steps: 100, batchSize: 4, learningRate: 1e-2 }, { out: join(root, 'base') });
  });

  it('moves the adapters, keeps the base bit for bit, scores KL against the base and checkpoints the adapter alone', async () => {
    const runDir = join(root, 'full');
    const policy = await BuiltinPolicy.load(baseDir, { lora: c.lora! });
    const before = await policy.adapters!.base().score({ prompts: [Int32Array.of(1, 2, 3)], completions: [Int32Array.of(4, 5)] });
    const result = await train({ config: c, policy, runDir, loadPolicy });
    expect(result.steps).toBe(4);
    const { metrics } = outcome(runDir);
    for (const m of metrics) expect(m.gradNorm).toBeGreaterThan(0);
    expect(metrics[0].lossStats.kl).toBe(0); // B = 0: the policy is its base at step 1
    expect(metrics[3].lossStats.kl).toBeGreaterThan(0);
    expect(existsSync(join(runDir, 'reference'))).toBe(false);
    expect(existsSync(join(runDir, 'base'))).toBe(false); // the base is the folder it was loaded from
    const checkpoint = join(runDir, 'checkpoints', 'step-4', 'policy');
    expect(readdirSync(checkpoint).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'optimizer.safetensors', 'trainer_state.json']);
    expect(JSON.parse(readFileSync(join(checkpoint, 'adapter_config.json'), 'utf8')).base_model_name_or_path).toBe(baseDir);
    const trained = await BuiltinPolicy.load(checkpoint);
    const byName = (tensors: { name: string; data: Float32Array }[]) => Object.fromEntries(tensors.map((t) => [t.name, t.data]));
    expect(byName(trained.getTensors())).toEqual(byName((await loadCheckpoint(baseDir)).tensors));
    expect(trained.getAdapterTensors().some((t) => t.name.endsWith('lora_B.weight') && t.data.some((x) => x !== 0))).toBe(true);
    const after = await trained.adapters!.base().score({ prompts: [Int32Array.of(1, 2, 3)], completions: [Int32Array.of(4, 5)] });
    expect(after.logp).toEqual(before.logp);
  });

  it('stopped after step 2 and resumed, it logs what the uninterrupted run logged', async () => {
    const runDir = join(root, 'resumed');
    const stop = { requested: false };
    const onEvent = (e: TrainerEvent) => void (e.type === 'step' && e.record.step === 2 && (stop.requested = true));
    const first = await train({ config: c, policy: await BuiltinPolicy.load(baseDir, { lora: c.lora! }), runDir, loadPolicy, onEvent, stop });
    expect(first).toMatchObject({ stopReason: 'interrupted', steps: 2 });
    await resume(runDir, { loadPolicy });
    expect(outcome(runDir)).toEqual(outcome(join(root, 'full')));
  });

  it('a LoRA policy made in memory gets its base saved once as <run>/base, which its checkpoints name', async () => {
    const runDir = join(root, 'in-memory');
    const start = await BuiltinPolicy.load(baseDir);
    const policy = BuiltinPolicy.create(start.config, { seed: 3, tokenizer: start.tokenizer, lora: c.lora! });
    policy.setTensors(start.getTensors());
    await train({ config: { ...c, steps: 1, checkpointEvery: 1, validation: { ...c.validation, every: 0 } }, policy, runDir, loadPolicy, skipTest: true });
    expect(policy.adapters!.baseFolder).toBe(join(runDir, 'base'));
    const checkpoint = join(runDir, 'checkpoints', 'step-1', 'policy');
    expect(JSON.parse(readFileSync(join(checkpoint, 'adapter_config.json'), 'utf8')).base_model_name_or_path).toBe(join(runDir, 'base'));
    const batch = { prompts: [Int32Array.of(5, 6, 7)], completions: [Int32Array.of(8, 9, 10)] };
    expect((await (await BuiltinPolicy.load(checkpoint)).score(batch)).logp).toEqual((await policy.score(batch)).logp);
  });

  it('sft of a LoRA policy made in memory writes out/base beside the adapter, and out/policy loads as base + adapter', async () => {
    const start = await BuiltinPolicy.load(baseDir);
    const policy = BuiltinPolicy.create(start.config, { seed: 4, tokenizer: start.tokenizer, lora: { rank: 2 } });
    policy.setTensors(start.getTensors());
    const out = join(root, 'lora-sft');
    await sft(policy, recommendExamples(moviesData(moviesDir), 3), { steps: 3, batchSize: 2, learningRate: 1e-2 }, { out });
    expect(existsSync(join(out, 'base', 'config.json'))).toBe(true);
    const loaded = await BuiltinPolicy.load(join(out, 'policy'));
    expect(loaded.getAdapterTensors()).toEqual(policy.getAdapterTensors());
  });

  it('refuses config.lora with a policy without those adapters', async () => {
    const error = await train({ config: c, policy: await BuiltinPolicy.load(baseDir), runDir: join(root, 'refused'), loadPolicy }).catch((e) => e);
    expect(error).toMatchObject({ code: 'GRPO_INVALID_ARGUMENT', message: expect.stringMatching(/config "lora"/) });
  });

  it('grpo train --lora.rank … then grpo merge <checkpoint>/policy: a full folder whose scores are the adapted policy\'s', async () => {
    const runDir = join(root, 'cli');
    const flags = ['--recipe', 'remark', '--steps', '1', '--groups', '2', '--candidates', '2', '--generation.maxNewTokens', '16',
      '--rewards.ranks', '3', '--rewards.catalog', 'benchmark', '--validation.every', '0', '--validation.metric', 'unionRecall',
      '--testPrompts', '1', '--data.moviesDir', moviesDir, '--lora.rank', '2', '--lora.targetModules', 'q_proj,v_proj'];
    expect(await main(['train', '--policy', baseDir, '--out', runDir, ...flags])).toBe(0);
    const checkpoint = join(runDir, 'checkpoints', 'step-1', 'policy');
    expect(JSON.parse(readFileSync(join(checkpoint, 'adapter_config.json'), 'utf8'))).toMatchObject({ r: 2, target_modules: ['q_proj', 'v_proj'] });
    const merged = join(root, 'merged');
    expect(await main(['merge', checkpoint, '--out', merged])).toBe(0);
    const batch = { prompts: [Int32Array.of(5, 6, 7)], completions: [Int32Array.of(8, 9, 10)] };
    const [a, b] = await Promise.all([(await BuiltinPolicy.load(merged)).score(batch), (await BuiltinPolicy.load(checkpoint)).score(batch)]);
    a.logp[0].forEach((x, i) => expect(Math.abs(x - b.logp[0][i])).toBeLessThan(1e-4));
  });

  it('grpo train --lora.from <adapter folder>: the run starts from that adapter on --policy and records its settings', async () => {
    const start = await BuiltinPolicy.load(baseDir, { lora: { rank: 3, alpha: 6, targetModules: ['q_proj', 'up_proj'] } });
    start.setAdapterTensors(start.getAdapterTensors().map((t, i) => ({ ...t, data: t.data.map((_, j) => Math.sin(i * 131 + j) * 0.05) })));
    const adapterDir = join(root, 'start-adapter');
    await start.save(adapterDir);
    const runDir = join(root, 'cli-from');
    // learning rate 0: AdamW leaves the adapters where they started, so the checkpoint holds the start's tensors exactly
    const flags = ['--recipe', 'remark', '--steps', '1', '--groups', '2', '--candidates', '2', '--generation.maxNewTokens', '16',
      '--rewards.ranks', '3', '--rewards.catalog', 'benchmark', '--validation.every', '0', '--validation.metric', 'unionRecall',
      '--testPrompts', '1', '--data.moviesDir', moviesDir, '--learningRate', '0', '--lora.from', adapterDir, '--lora.dropout', '0'];
    expect(await main(['train', '--policy', baseDir, '--out', runDir, ...flags])).toBe(0);
    const saved = JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8'));
    expect(saved.lora).toEqual({ rank: 3, alpha: 6, dropout: 0, targetModules: ['q_proj', 'up_proj'], rslora: false, from: adapterDir });
    const checkpoint = await BuiltinPolicy.load(join(runDir, 'checkpoints', 'step-1', 'policy'));
    expect(checkpoint.adapters!.baseFolder).toBe(baseDir);
    expect(checkpoint.getAdapterTensors()).toEqual(start.getAdapterTensors());
    expect(await main(['train', '--resume', runDir, '--steps', '2'])).toBe(0); // from its own checkpoint: lora.from is not read again
    expect(readdirSync(join(runDir, 'checkpoints'))).toContain('step-2');
    expect(await main(['train', '--policy', baseDir, '--out', join(root, 'cli-from-refused'), ...flags, '--lora.rank', '4'])).not.toBe(0);
  });
});
