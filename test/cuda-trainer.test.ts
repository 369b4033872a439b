// The trainer end to end on the GPU: the built-in model on device 'cuda' against the same model on the CPU.
// Runs wherever loadCuda() finds a usable GPU and the CUDA addon has the model methods; elsewhere the suite is
// skipped and the reason printed (the one skip the project allows). Tolerance of model outputs: the GPU's dense
// layers use the 3xTF32 GEMM and other summation orders, so log-probs agree to |Δ| <= 1e-4 + 1e-4·|cpu|
// (float32 rounding over a one-layer model), not bitwise.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCuda, MODEL_METHODS } from '../lib/binding/index.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { sftLoss } from '../lib/policy/policy.js';
import type { StepRecord } from '../lib/trainer/loop.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { generateRollout } from '../lib/trainer/rollout.js';
import { createTask } from '../lib/trainer/tasks.js';
import { train } from '../lib/trainer/train.js';
import { expectClose } from './helpers/close.js';
import { tempRunRoot, tinyConfig, tinyMoviesDir, tinyTokenizer } from './helpers/trainer.js';

const { binding: gpu, reason } = loadCuda();
const modelOnGpu = gpu !== null && MODEL_METHODS.every((m) => typeof gpu[m] === 'function');
if (!modelOnGpu) console.log(`CUDA trainer tests skipped: ${gpu ? `the CUDA addon has no model methods (${reason})` : reason}`);

const LOGP_TOLERANCE = { atol: 1e-4, rtol: 1e-4 };

const moviesDir = tinyMoviesDir([1, 2, 1], 2);
const runConfig = (device: 'cpu' | 'cuda') => resolveConfig({
  recipe: 'remark', device, seed: 3, steps: 3, groups: 2, candidates: 3, learningRate: 3e-3, checkpointEvery: 2, testPrompts: 2,
  generation: { maxNewTokens: 24, temperature: 0.8 }, rewards: { ranks: 3, catalog: 'benchmark' },
  validation: { every: 3, prompts: 2, metric: 'unionRecall', patience: 0 }, data: { moviesDir },
});

function policyOn(device: 'cpu' | 'cuda'): BuiltinPolicy {
  const tokenizer = tinyTokenizer();
  return BuiltinPolicy.create(tinyConfig(tokenizer.vocabSize), { seed: 1, tokenizer, device });
}

describe.runIf(modelOnGpu)('the trainer on device cuda', () => {
  it('the same seed gives the same initial weights on both devices', () => {
    const cuda = policyOn('cuda');
    expect(cuda.device).toBe('cuda');
    expect(cuda.getTensors()).toEqual(policyOn('cpu').getTensors());
  });

  it("first-step log-probs, loss and gradient norm match the CPU's on the first step's rollout", async () => {
    const cpu = policyOn('cpu');
    const cuda = policyOn('cuda');
    const config = runConfig('cpu');
    const task = createTask(config, tinyTokenizer());
    const rollout = await generateRollout(cpu, task.prompts(0).texts, config.candidates, config.generation, 11);
    const batch = { prompts: rollout.promptIds, completions: rollout.completions };
    const [cpuScores, cudaScores] = [await cpu.score(batch), await cuda.score(batch)];
    cpuScores.logp.forEach((lp, i) => expectClose(cudaScores.logp[i], lp, LOGP_TOLERANCE));
    cpuScores.entropy.forEach((h, i) => expectClose(cudaScores.entropy[i], h, LOGP_TOLERANCE));
    const [cpuStep, cudaStep] = [await cpu.step(batch, sftLoss(), { learningRate: 1e-3 }), await cuda.step(batch, sftLoss(), { learningRate: 1e-3 })];
    expectClose([cudaStep.loss, cudaStep.gradNorm], [cpuStep.loss, cpuStep.gradNorm], { atol: 1e-4, rtol: 1e-3 });
    // AdamW's first update is about lr·sign(gradient), so a gradient that is ~0 on both may move a weight either way;
    // the model's outputs after the step are what must still agree (looser: one update of lr 1e-3 apart at most)
    const [cpuAfter, cudaAfter] = [await cpu.score(batch), await cuda.score(batch)];
    cpuAfter.logp.forEach((lp, i) => expectClose(cudaAfter.logp[i], lp, { atol: 1e-3, rtol: 1e-3 }));
  });

  it('a short run completes with finite metrics; its checkpoint loads on the CPU and scores the same', async () => {
    const runDir = join(tempRunRoot(), 'cuda');
    const loadPolicy = (d: string) => BuiltinPolicy.load(d, { device: 'cuda' });
    const result = await train({ config: runConfig('cuda'), policy: policyOn('cuda'), runDir, loadPolicy });
    expect(result.steps).toBe(3);
    expect(Number.isFinite(result.test?.unionRecall)).toBe(true); // the selection metric (popularity is null without hits)
    const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as StepRecord);
    for (const row of rows) {
      expect(row.device).toBe('cuda');
      expect([row.loss, row.gradNorm, row.stats.rewardMean, row.lossStats.kl].every(Number.isFinite)).toBe(true);
    }
    const saved = join(runDir, 'checkpoints', 'step-3', 'policy');
    const [onCuda, onCpu] = [await loadPolicy(saved), await BuiltinPolicy.load(saved, { device: 'cpu' })];
    expect(onCpu.getOptimizerState()).toEqual(onCuda.getOptimizerState());
    const prompts = [Int32Array.of(1, 2, 3, 4)];
    const batch = { prompts, completions: [Int32Array.of(5, 6, 7)] };
    expectClose((await onCuda.score(batch)).logp[0], (await onCpu.score(batch)).logp[0], LOGP_TOLERANCE);
  });
});
