// The math task on a user's math/1 files: the split rule, the bundled GSM8K records scored through the verifier,
// the task kind a recipe accepts, and a tiny `ccr` run on GSM8K end to end (finite metrics, a test file, a report).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../lib/cli/main.js';
import { readMathProblems } from '../lib/data/math-record.js';
import { holdOut } from '../lib/data/splits.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { resolveConfig, taskOf } from '../lib/trainer/recipes.js';
import { ccrTask, mathData } from '../lib/trainer/task-ccr.js';
import { train } from '../lib/trainer/train.js';
import { capture } from './helpers/capture.js';
import { rolloutOf, tempRunRoot, tinyConfig, tinyTokenizer } from './helpers/trainer.js';

afterEach(() => vi.restoreAllMocks());

const GSM8K = join(import.meta.dirname, '..', 'data', 'gsm8k', 'gsm8k-test-300.jsonl');

describe('holdOut', () => {
  const records = Array.from({ length: 50 }, (_, i) => i);
  it('holds out 10% each by default, disjoint, train in file order, the same for the same seed', () => {
    const a = holdOut(records, { heldOut: 0, seed: 3, source: 'f' });
    expect([a.train.length, a.validation.length, a.test.length]).toEqual([40, 5, 5]);
    expect([...a.train, ...a.validation, ...a.test].sort((x, y) => x - y)).toEqual(records);
    expect(a.train).toEqual([...a.train].sort((x, y) => x - y));
    expect(holdOut(records, { heldOut: 0, seed: 3, source: 'f' })).toEqual(a);
    expect(holdOut(records, { heldOut: 0, seed: 4, source: 'f' }).validation).not.toEqual(a.validation);
  });

  it('a split with its own file holds nothing out; too small a file is refused by name', () => {
    const own = holdOut(records, { validation: [100], heldOut: 7, seed: 0, source: 'f' });
    expect([own.train.length, own.validation, own.test.length]).toEqual([43, [100], 7]);
    expect(holdOut(records, { validation: [1], test: [2], heldOut: 7, seed: 0, source: 'f' }).train).toEqual(records);
    expect(() => holdOut([1, 2], { heldOut: 1, seed: 0, source: 'tiny.jsonl' })).toThrow(/tiny.jsonl: 2 records cannot give 2 held-out split\(s\) of 1/);
  });
});

describe('math task data', () => {
  it('reads the bundled GSM8K math/1 file and splits it 240 / 30 / 30; own files replace the held-out ones', () => {
    const data = mathData(resolveConfig({ recipe: 'ccr', data: { math: GSM8K } }).data);
    expect([data.train.length, data.validation.length, data.test.length]).toEqual([240, 30, 30]);
    expect(data.train[0]).toMatchObject({ id: 'gsm8k-test-0000', answer: '18' });
    const dir = tempRunRoot();
    const validation = join(dir, 'validation.jsonl');
    writeFileSync(validation, readFileSync(GSM8K, 'utf8').split('\n').slice(0, 4).join('\n'));
    const own = mathData(resolveConfig({ recipe: 'grpo', data: { math: GSM8K, mathValidation: validation, heldOut: 20 } }).data);
    expect([own.train.length, own.validation.length, own.test.length]).toEqual([280, 4, 20]);
  });

  it('scores real GSM8K prompts through the verifier: the reference answers (as LaTeX) earn full accuracy, others none', () => {
    const config = resolveConfig({ recipe: 'ccr', groups: 2, candidates: 2, rewards: { order: 'fixed' }, data: { math: GSM8K, mathValidation: GSM8K, mathTest: GSM8K } });
    const task = ccrTask(config, mathData(config.data), tinyTokenizer());
    const prompts = task.prompts(0);
    const problems = readMathProblems(GSM8K);
    // order "fixed": the groups are consecutive problems of the file, so each prompt holds its three in order
    const groups = Array.from({ length: 100 }, (_, g) => problems.slice(3 * g, 3 * g + 3));
    for (const [i, truths] of prompts.truths.entries()) {
      const group = groups.find((q) => q.every((p, k) => p.answer === truths[k]) && q.every((p) => prompts.texts[i].includes(p.question)));
      expect(group, `prompt ${i}`).toBeDefined();
    }
    const right = prompts.truths[0].map((a, k) => `Answer ${k + 1}: \\boxed{${a}.0}`).join('\n');
    const wrong = prompts.truths[0].map((a, k) => `Answer ${k + 1}: \\boxed{${Number(a) + 1}}`).join('\n');
    const { rewards, stats } = task.rewards({ ...prompts, texts: prompts.texts.slice(0, 1), truths: prompts.truths.slice(0, 1) }, rolloutOf([right, wrong], [0, 0]));
    expect(Array.from(rewards.accuracy)).toEqual([1, 0]);
    expect(Array.from(rewards.rewards)).toEqual([3, 1]); // 2·accuracy + 1·format
    expect(stats.problemsPerStep).toBe(3);
  });

  it('a math recipe trains on math only; the config names the task it cannot take', () => {
    expect(taskOf(resolveConfig({ recipe: 'ccr' }))).toBe('math');
    expect(taskOf(resolveConfig({ recipe: 'remark', task: 'qa' }))).toBe('qa');
    expect(() => resolveConfig({ recipe: 'ccr', task: 'qa' })).toThrow(/config "task": recipe "ccr" trains on "math" but received "qa"/);
    expect(() => resolveConfig({ recipe: 'remark', task: 'math' })).toThrow(/recipe "remark" trains on "recommend" or "qa"/);
  });

  it('grpo train --help names the math task and its data options', async () => {
    const io = capture();
    expect(await main(['train', '--help'])).toBe(0);
    for (const flag of ['--data.math ', '--data.mathValidation', '--data.mathTest', '--data.heldOut', '--rewards.order']) expect(io.out()).toContain(flag);
  });
});

describe('ccr on GSM8K end to end', () => {
  it('a few steps on the bundled file: finite step metrics, validation and test accuracy, a report', async () => {
    const tokenizer = tinyTokenizer();
    const policy = await BuiltinPolicy.create({ ...tinyConfig(tokenizer.vocabSize), maxPositions: 1024 }, { seed: 2, tokenizer });
    const config = resolveConfig({
      recipe: 'ccr', steps: 3, groups: 2, candidates: 2, learningRate: 1e-2, generation: { maxNewTokens: 16 }, evalMaxNewTokens: 8,
      validation: { every: 2, prompts: 2 }, testPrompts: 3, checkpointEvery: 3, data: { math: GSM8K },
    });
    const runDir = join(tempRunRoot(), 'ccr-gsm8k');
    const result = await train({ config, policy, runDir, loadPolicy: (d) => BuiltinPolicy.load(d) });
    expect(result.steps).toBe(3);
    const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      for (const key of ['rewardMean', 'accuracy', 'format', 'problemsPerStep']) expect(Number.isFinite(row.stats[key]), key).toBe(true);
      expect(row.stats.problemsPerStep).toBe(6);
    }
    expect(Object.keys(result.test!)).toEqual(['accuracy', 'completionTokens']);
    for (const value of Object.values(result.test!)) expect(Number.isFinite(value)).toBe(true);
    expect(JSON.parse(readFileSync(join(runDir, 'test.json'), 'utf8')).completions).toHaveLength(3);
    expect(existsSync(join(runDir, 'report', 'report.md'))).toBe(true);
  }, 120_000);
});
