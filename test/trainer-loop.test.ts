// The pieces of the GRPO step: token advantages of both tasks (item segments with overflow, the CCR
// unfinished-suffix mask), stored old log-probs for μ > 1, stopping rules, and a KL-threshold stop.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { trainStep } from '../lib/trainer/loop.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import type { Rollout } from '../lib/trainer/rollout.js';
import { ccrTask, arithmeticData } from '../lib/trainer/task-ccr.js';
import { createTask } from '../lib/trainer/tasks.js';
import { train } from '../lib/trainer/train.js';
import { initialValidation, recordValidation, stopAfter } from '../lib/trainer/validation.js';
import { rolloutOf, tempRunRoot, tinyMoviesDir, tinyPolicy, tinyTokenizer } from './helpers/trainer.js';

describe('token advantages', () => {
  it('CCR drops only the unfinished suffix of a truncated completion; its reward still counts', () => {
    const config = resolveConfig({ recipe: 'ccr', candidates: 2, groups: 1, data: { arithmeticTrain: 30, arithmeticEval: 3 } });
    const task = ccrTask(config, arithmeticData(config.data), tinyTokenizer());
    const prompts = { texts: ['p'], truths: [['3', '6', '9']] };
    const texts = ['Problem 1: 1 + 2 = 3.\nAnswer 1: \\boxed{3}\n\nProblem 2: 5 + 1 =', 'Answer 1: \\boxed{4}'];
    const rollout = rolloutOf(texts, [1, 0]);
    const { rewards, stats } = task.rewards(prompts, rollout);
    expect(Array.from(rewards.correctCounts)).toEqual([1, 0]);
    expect(stats.informativeGroups).toBe(1);
    const { signal } = task.advantages(rewards, rollout);
    const T = rollout.width;
    const offsets = tinyTokenizer().offsets(rollout.completions[0]);
    const boxEnd = texts[0].indexOf('}') + 1;
    for (let t = 0; t < rollout.completions[0].length; t++) {
      expect(signal.lossMask[t]).toBe(offsets[2 * t] < boxEnd ? 1 : 0); // the reward-bearing prefix keeps its loss
      if (signal.lossMask[t]) expect(signal.advantages[t]).toBeGreaterThan(0);
    }
    const row1 = signal.lossMask.subarray(T, T + rollout.completions[1].length);
    expect(Array.from(row1).every((m) => m === 1)).toBe(true); // finished: nothing dropped
  });

  it('recommendation: items past K share the overflow segment K; separators belong to no item', () => {
    const moviesDir = tinyMoviesDir([1, 2], 1);
    const config = resolveConfig({ recipe: 'remark', candidates: 2, groups: 1, rewards: { ranks: 1, catalog: 'none' }, data: { moviesDir } });
    const task = createTask(config, tinyTokenizer());
    const prompts = task.prompts(0);
    const text = '1. Heat (1995)\n2. Up (2009)';
    const rollout = rolloutOf([text, text], [1, 1]);
    const { rewards } = task.rewards(prompts, rollout);
    const { signal } = task.advantages(rewards, rollout);
    const offsets = tinyTokenizer().offsets(rollout.completions[0]);
    const newline = text.indexOf('\n');
    for (let t = 0; t < rollout.completions[0].length; t++) {
      const [start, end] = [offsets[2 * t], offsets[2 * t + 1]];
      const expected = end <= newline ? 0 : start > newline ? 1 : -1;
      if (start === newline && end === newline + 1) expect(signal.segments![t]).toBe(-1);
      else if (end <= newline || start > newline) expect(signal.segments![t]).toBe(expected);
    }
  });
});

describe('the step', () => {
  it('μ = 1 is on-policy (ratio exactly 1); μ = 2 stores old log-probs and the second update sees a ratio ≠ 1', async () => {
    const moviesDir = tinyMoviesDir([1, 2, 1], 1);
    const base = { recipe: 'remark' as const, groups: 2, candidates: 3, learningRate: 5e-2, generation: { maxNewTokens: 12 }, rewards: { ranks: 3, catalog: 'none' as const }, data: { moviesDir }, loss: { beta: 0, isLevel: 'token' as const } };
    for (const policyUpdates of [1, 2]) {
      const config = resolveConfig({ ...base, policyUpdates, advantages: { lengthShaping: false } });
      const policy = await tinyPolicy();
      // a fake signal everywhere: every token gets advantage 1 (so the update moves the policy)
      const task = createTask(config, policy.tokenizer!);
      const signalled = { ...task, advantages: (_rewards: unknown, rollout: Rollout) => ({ signal: { advantages: new Float32Array(rollout.mask.length).fill(1), lossMask: rollout.mask }, stats: {} }) };
      const record = await trainStep({ config, policy, task: signalled, lossOptions: config.loss }, 0, 0);
      if (policyUpdates === 1) expect(record.lossStats.ratioMean).toBe(1);
      else expect(Math.abs(record.lossStats.ratioMean - 1)).toBeGreaterThan(1e-6);
    }
  });

  it('a run whose KL to the reference passes the threshold stops with klThreshold', async () => {
    const moviesDir = tinyMoviesDir([1, 2, 1], 2);
    const config = resolveConfig({
      recipe: 'rank-grpo', steps: 20, groups: 2, candidates: 3, learningRate: 5e-2, generation: { maxNewTokens: 12 },
      rewards: { ranks: 3, catalog: 'none' }, data: { moviesDir }, loss: { beta: 0.1, isLevel: 'token' },
      validation: { every: 0, klThreshold: 1e-9 }, advantages: { lengthShaping: true }, testPrompts: 1,
    });
    const result = await train({ config, policy: await tinyPolicy(), runDir: join(tempRunRoot(), 'kl'), loadPolicy: (d) => BuiltinPolicy.load(d) });
    expect(result.stopReason).toBe('klThreshold');
    expect(result.steps).toBeLessThan(20);
  });
});

describe('stopping rules', () => {
  const v = { every: 10, prompts: 0, metric: 'recall', patience: 20, klThreshold: 0.5 };
  it('best is strictly higher and never NaN; patience is judged at validation steps only', () => {
    const state = initialValidation();
    expect(recordValidation(state, v, 10, 1, { recall: NaN })).toBe(false);
    expect(recordValidation(state, v, 20, 2, { recall: 0.2 })).toBe(true);
    expect(recordValidation(state, v, 30, 3, { recall: 0.2 })).toBe(false);
    expect(stopAfter(state, v, 35, 100, 0)).toBeNull();
    expect(recordValidation(state, v, 40, 4, { recall: 0.1 })).toBe(false);
    expect(stopAfter(state, v, 40, 100, 0)).toBe('patience');
    expect(stopAfter(state, v, 41, 100, 0.6)).toBe('klThreshold');
    expect(stopAfter(state, v, 100, 100, 0)).toBe('maxSteps');
    expect(state).toMatchObject({ best: 0.2, bestStep: 20 });
  });
});
