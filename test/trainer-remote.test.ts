// `train` with rollouts.backend "remote": every rollout comes from a loopback engine (test/helpers/fake-engine.ts)
// that samples with the built-in policy the trainer pushed to it (its LoRA adapter folder, loaded as vLLM loads one),
// so the engine's log-probs are the trainer's own up to float noise. Checked: one request per (step, prompt) with its
// n candidates, the policy version of every step's rollouts, one push per step verified in /v1/models, TRL's
// sampling/* metrics (the importance weight ≈ 1 when pushed, far from it when the engine keeps the initial policy),
// finite training metrics, and a server killed mid-run: GRPO_REMOTE_UNAVAILABLE, then a resume on a fresh server at
// another address (rollouts.endpoints may change on resume) that logs what the uninterrupted run logged; and full
// fine-tuning against the engine speaking SGLang's native API, the weights pushed each step through
// /update_weights_from_disk and checked in /get_model_info (the last 2 weight folders kept); and LoRA over SGLang's
// protocol, killed mid-run and resumed on a fresh server, logging what the vLLM-protocol run logged.
// TRL's correction it follows: huggingface/trl at f2cd577, trl/trainer/grpo_trainer.py L2579–2601 (ratio =
// exp(old_per_token_logps − sampling_per_token_logps), clamped at vllm_importance_sampling_clip_max, the former
// vllm_importance_sampling_cap), L3117–3118 (per_token_loss *= ratio), L2779–2812 (the sampling/* metrics).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { requestSeed } from '../lib/rollout/remote.js';
import { mixSeed } from '../lib/data/rng.js';
import type { ConfigInput } from '../lib/trainer/config.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { resume } from '../lib/trainer/resume.js';
import { recommendExamples, sft } from '../lib/trainer/sft.js';
import { moviesData } from '../lib/trainer/tasks.js';
import { train } from '../lib/trainer/train.js';
import { fakeEngine, type FakeEngine } from './helpers/fake-engine.js';
import { tempRunRoot, tinyMoviesDir, tinyPolicy } from './helpers/trainer.js';

const loadPolicy = (dir: string) => BuiltinPolicy.load(dir);
const LORA = { rank: 4, alpha: 8, dropout: 0, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
const STEPS = 3, GROUPS = 2, CANDIDATES = 3;

const config = (url: string, rollouts: ConfigInput['rollouts'] = {}) => resolveConfig({
  recipe: 'remark', seed: 7, steps: STEPS, groups: GROUPS, candidates: CANDIDATES, learningRate: 2e-2, checkpointEvery: 1,
  generation: { maxNewTokens: 24, temperature: 0.8 }, rewards: { ranks: 3, catalog: 'benchmark' },
  validation: { every: 0, metric: 'unionRecall', patience: 0 }, lora: LORA as never,
  rollouts: { backend: 'remote', endpoints: [url], maxInFlight: 1, retries: 1, backoffMs: 10, ...rollouts },
});

const rows = (runDir: string) => readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const deterministic = (runDir: string) => rows(runDir).map(({ time: _t, elapsed: _e, ...rest }) => rest);

describe('train on remote rollouts', () => {
  const moviesDir = tinyMoviesDir([1, 2, 1], 2);
  const root = tempRunRoot();
  const startDir = join(root, 'sft', 'policy');
  const engines: FakeEngine[] = [];
  const serve = async (options: { stopAfter?: number } = {}) => {
    const engine = await fakeEngine(await BuiltinPolicy.load(startDir), 'policy', options);
    engines.push(engine);
    return engine;
  };
  afterAll(() => Promise.all(engines.map((e) => e.close())));

  beforeAll(async () => {
    // a short SFT so that completions hold items and rewards vary: the trainer's and the engine's starting point
    const policy = await tinyPolicy();
    await sft(policy, recommendExamples(moviesData(moviesDir), 3), { steps: 120, batchSize: 4, learningRate: 1e-2 }, { out: join(root, 'sft') });
  });

  it('samples every rollout on the engine, pushes the adapter each step and measures an importance weight of 1', async () => {
    const engine = await serve();
    const runDir = join(root, 'pushed');
    const c = config(engine.url);
    const result = await train({ config: c, policy: await BuiltinPolicy.load(startDir, { lora: c.lora! }), runDir, loadPolicy, skipTest: true });
    expect(result.steps).toBe(STEPS);
    const metrics = rows(runDir);
    // one request per (step, prompt), each for the n candidates, seeded by (seed, step, prompt), naming the version pushed
    expect(engine.completions.map((r) => [r.model, r.n, r.seed])).toEqual(Array.from({ length: STEPS * GROUPS }, (_, i) => {
      const step = Math.floor(i / GROUPS);
      return [step === 0 ? 'policy' : `policy-step-${step}`, CANDIDATES, requestSeed(mixSeed(7, step) >>> 0, step, i % GROUPS)];
    }));
    expect(metrics.map((m) => m.policyVersion)).toEqual(['policy', 'policy-step-1', 'policy-step-2']);
    expect(engine.loads).toEqual(['policy-step-1', 'policy-step-2', 'policy-step-3']);
    expect(engine.served()).toEqual(['policy', 'policy-step-3']); // each push unloads the version before
    metrics.forEach((m, step) => {
      // every candidate the engine served reached the step: its completion tokens are the engine's
      const served = engine.completions.slice(step * GROUPS, (step + 1) * GROUPS).reduce((a, r) => a + r.tokens, 0);
      expect(m.tokens.completion).toBe(served);
      for (const key of ['loss', 'grad_norm', 'entropy', 'reward']) expect(Number.isFinite(m[key])).toBe(true);
      expect(m.gradNorm).toBeGreaterThan(0);
      expect(m['sampling/sampling_logp_difference/max']).toBeLessThan(1e-4);
      expect(m['sampling/importance_sampling_ratio/min']).toBeGreaterThan(1 - 1e-4);
      expect(m['sampling/importance_sampling_ratio/max']).toBeLessThan(1 + 1e-4);
      expect(Math.abs(m['sampling/importance_sampling_ratio/mean'] - 1)).toBeLessThan(1e-5);
    });
  });

  it('shows the mismatch when the engine keeps sampling the initial policy, with the weight capped at clipMax', async () => {
    const engine = await serve();
    const runDir = join(root, 'stale');
    const c = config(engine.url, { pushEvery: 0, clipMax: 1.05 });
    await train({ config: c, policy: await BuiltinPolicy.load(startDir, { lora: c.lora! }), runDir, loadPolicy, skipTest: true });
    const metrics = rows(runDir);
    expect(engine.loads).toEqual([]);
    expect(metrics.map((m) => m.policyVersion)).toEqual(['policy', 'policy', 'policy']);
    expect(metrics[0]['sampling/sampling_logp_difference/max']).toBeLessThan(1e-4); // step 1: the trainer is still the initial policy
    for (const m of metrics.slice(1)) {
      expect(m['sampling/sampling_logp_difference/mean']).toBeGreaterThan(1e-3);
      expect(m['sampling/importance_sampling_ratio/max']).toBeCloseTo(1.05, 6); // truncated
      expect(m['sampling/importance_sampling_ratio/min']).toBeLessThan(1);
    }
  });

  it('a server killed mid-run ends the step in GRPO_REMOTE_UNAVAILABLE; a resume on a fresh one (a resumable option) finishes the run as if uninterrupted', async () => {
    const engine = await serve({ stopAfter: GROUPS + 1 }); // answers step 1 and the first prompt of step 2, then closes
    const runDir = join(root, 'killed');
    const c = config(engine.url);
    const error = await train({ config: c, policy: await BuiltinPolicy.load(startDir, { lora: c.lora! }), runDir, loadPolicy, skipTest: true })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'GRPO_REMOTE_UNAVAILABLE', message: expect.stringContaining(`${engine.url} stayed down for rollout (step 1, prompt 1)`) });
    expect(rows(runDir).map((m) => m.step)).toEqual([1]);
    const fresh = await serve(); // a restarted server elsewhere: it serves the base model only
    const result = await resume(runDir, { loadPolicy, skipTest: true, overrides: { rollouts: { endpoints: [fresh.url], retries: 2 } } });
    expect(result.steps).toBe(STEPS);
    expect(fresh.loads).toEqual(['policy-step-1', 'policy-step-2', 'policy-step-3']); // the resumed version first
    expect(deterministic(runDir)).toEqual(deterministic(join(root, 'pushed')));
  });

  it('full fine-tuning over SGLang\'s protocol pushes the weights each step (weight_version checked) and measures an importance weight of 1', async () => {
    const engine = await serve();
    const runDir = join(root, 'sglang-full');
    const { lora: _lora, ...full } = config(engine.url, { protocol: 'sglang' });
    await train({ config: { ...full, lora: null }, policy: await BuiltinPolicy.load(startDir), runDir, loadPolicy, skipTest: true });
    const metrics = rows(runDir);
    // the base model sampled every step (no lora_path), its weights replaced after each step under the step's version
    expect(engine.completions.map((r) => [r.model, r.n, r.seed])).toEqual(Array.from({ length: STEPS * GROUPS }, (_, i) => {
      const step = Math.floor(i / GROUPS);
      return ['policy', CANDIDATES, requestSeed(mixSeed(7, step) >>> 0, step, i % GROUPS)];
    }));
    expect(engine.loads).toEqual(['policy-step-1', 'policy-step-2', 'policy-step-3']);
    expect(metrics.map((m) => m.policyVersion)).toEqual(['policy', 'policy-step-1', 'policy-step-2']);
    expect(readdirSync(join(runDir, 'weights')).sort()).toEqual(['step-2', 'step-3']);
    for (const m of metrics) {
      expect(m.gradNorm).toBeGreaterThan(0);
      expect(m['sampling/sampling_logp_difference/max']).toBeLessThan(1e-4);
      expect(Math.abs(m['sampling/importance_sampling_ratio/mean'] - 1)).toBeLessThan(1e-5);
    }
  });

  it('LoRA over SGLang\'s protocol: the adapter loaded each step, sampled by lora_path, the one before unloaded; a resume loads its version again', async () => {
    const engine = await serve({ stopAfter: GROUPS + 1 }); // answers step 1 and the first prompt of step 2, then closes
    const runDir = join(root, 'sglang-lora');
    const c = config(engine.url, { protocol: 'sglang' });
    const error = await train({ config: c, policy: await BuiltinPolicy.load(startDir, { lora: c.lora! }), runDir, loadPolicy, skipTest: true })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'GRPO_REMOTE_UNAVAILABLE', message: expect.stringContaining('every endpoint is down') });
    expect(engine.completions.map((r) => r.model)).toEqual(['policy', 'policy', 'policy-step-1']);
    const fresh = await serve();
    await resume(runDir, { loadPolicy, skipTest: true, overrides: { rollouts: { endpoints: [fresh.url] } } });
    expect(fresh.loads).toEqual(['policy-step-1', 'policy-step-2', 'policy-step-3']);
    expect(fresh.served()).toEqual(['policy', 'policy-step-3']);
    expect(fresh.completions.map((r) => r.model)).toEqual(['policy-step-1', 'policy-step-1', 'policy-step-2', 'policy-step-2']);
    // the engine samples with the trainer's adapter, so the run logs what the vLLM-protocol run logged
    expect(deterministic(runDir)).toEqual(deterministic(join(root, 'pushed')));
  });

  it('refuses what it cannot do, naming the option', async () => {
    expect(() => resolveConfig({ recipe: 'remark', rollouts: { backend: 'remote' } })).toThrow(/config "rollouts.endpoints": expected at least one server URL/);
    expect(() => resolveConfig({ recipe: 'remark', rollouts: { backend: 'remote', endpoints: ['ftp://x'] } })).toThrow(/rollouts.endpoints\[0\].*http or https/);
    expect(() => resolveConfig({ recipe: 'remark', loss: { lossType: 'vespo' }, rollouts: { backend: 'remote', endpoints: ['http://127.0.0.1:1'] } }))
      .toThrow(/config "rollouts.correction": loss.lossType "vespo"/);
    expect(() => resolveConfig({ recipe: 'remark', rollouts: { clipMin: 3, clipMax: 3 } })).toThrow(/config "rollouts.clipMin": expected less than rollouts.clipMax = 3/);
    const { lora: _lora, ...full } = config('http://127.0.0.1:1');
    const error = await train({ config: { ...full, lora: null }, policy: await BuiltinPolicy.load(startDir), runDir: join(root, 'full-ft'), loadPolicy })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'GRPO_UNSUPPORTED', message: expect.stringContaining('config "rollouts.pushEvery"') });
  });
});
