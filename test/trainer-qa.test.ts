// The QA task on the bundled ProtoQA dev questions (qa/1): its data and defaults, rewards per recipe target on real
// records (union, count-weighted mean, one drawn respondent), the respondent draws of the rows sampler, the rank-wise
// advantages on the answers' tokens, and tiny `remark` and `rank-grpo` runs end to end.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../lib/cli/main.js';
import { evaluateQa } from '../lib/eval/qa-metrics.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { createTask } from '../lib/trainer/tasks.js';
import { clusterOfRespondent, PROTOQA_DEV, readQaFile, respondentsOf } from '../lib/data/qa-files.js';
import { qaData } from '../lib/trainer/task-qa.js';
import { train } from '../lib/trainer/train.js';
import { capture } from './helpers/capture.js';
import { rolloutOf, tempRunRoot, tinyPolicy, tinyTokenizer } from './helpers/trainer.js';

afterEach(() => vi.restoreAllMocks());

const qa = (recipe: 'remark' | 'remark-mean' | 'rank-grpo', extra: object = {}) =>
  resolveConfig({ recipe, task: 'qa', groups: 1, candidates: 2, ...extra });

describe('QA data and defaults', () => {
  it('the bundled ProtoQA dev set splits 42 / 5 / 5; the task scores K = 10 and selects on respondentRecall', () => {
    const config = qa('remark');
    const data = qaData(config.data);
    expect([data.train.length, data.validation.length, data.test.length]).toEqual([42, 5, 5]);
    expect(new Set([...data.train, ...data.validation, ...data.test].map((r) => r.id)).size).toBe(52);
    expect([config.rewards.ranks, config.validation.metric]).toEqual([10, 'respondentRecall']);
    expect(resolveConfig({ recipe: 'remark', task: 'qa', rewards: { ranks: 5 } }).rewards.ranks).toBe(5);
    expect(resolveConfig({ recipe: 'remark' }).validation.metric).toBe('relevantRecall'); // the recipe's own task keeps its defaults
  });

  it('a question without respondents is refused by name; own validation and test files hold nothing out', () => {
    const dir = tempRunRoot();
    const silent = join(dir, 'silent.jsonl');
    writeFileSync(silent, `${JSON.stringify({ id: 'q1', question: 'Name a colour.', answers: [{ text: 'red', count: 0 }] })}\n`);
    expect(() => readQaFile(silent)).toThrow(/silent.jsonl: question "q1" has no respondents/);
    const one = join(dir, 'one.jsonl');
    writeFileSync(one, readFileSync(PROTOQA_DEV, 'utf8').split('\n')[0]);
    const data = qaData(resolveConfig({ recipe: 'remark', task: 'qa', data: { qaValidation: one, qaTest: one } }).data);
    expect([data.train.length, data.validation.length, data.test.length]).toEqual([52, 1, 1]);
  });

  it('respondents are numbered cluster by cluster', () => {
    const record = { answers: [{ text: 'a', count: 2 }, { text: 'b', count: 0 }, { text: 'c', count: 1 }] };
    expect([0, 1, 2].map((r) => clusterOfRespondent(record, r))).toEqual([0, 0, 2]);
    expect(() => clusterOfRespondent(record, 3)).toThrow(/respondent below 3/);
  });
});

describe('QA rewards on real ProtoQA questions', () => {
  const listOf = (texts: string[]) => texts.map((t, i) => `${i + 1}. ${t}`).join('\n');

  it('remark: every cluster named is worth 1 at its rank, a repeat or a miss 0; remark-mean: its share of respondents', () => {
    for (const recipe of ['remark', 'remark-mean'] as const) {
      const config = qa(recipe, { rewards: { lengthWeight: 0 } });
      const task = createTask(config, tinyTokenizer());
      const prompts = task.prompts(0) as { texts: string[]; draws: { request: number }[] };
      const record = qaData(config.data).train[prompts.draws[0].request];
      expect(prompts.texts[0]).toContain(record.question);
      const [a, b] = record.answers;
      const text = listOf([a.aliases![0], 'xyzzy not an answer', b.text, a.text]);
      const { rewards } = task.rewards(prompts, rolloutOf([text, text], [0, 0])) as { rewards: { rewards: Float32Array } };
      const total = respondentsOf(record);
      const expected = recipe === 'remark' ? [1, 0, 1, 0] : [a.count / total, 0, b.count / total, 0];
      Array.from(rewards.rewards.subarray(0, 4)).forEach((r, k) => expect(r).toBeCloseTo(expected[k], 6));
      expect(Array.from(rewards.rewards.subarray(4, 10)).every((r) => r === 0)).toBe(true);
    }
  });

  it('rank-grpo: only the drawn respondent\'s answer counts, and over an epoch each cluster is drawn once per respondent', () => {
    const config = qa('rank-grpo', { rewards: { lengthWeight: 0 } });
    const data = qaData(config.data);
    const task = createTask(config, tinyTokenizer());
    const prompts = task.prompts(0) as { texts: string[]; draws: { request: number; respondent: number }[] };
    const record = data.train[prompts.draws[0].request];
    const drawn = clusterOfRespondent(record, prompts.draws[0].respondent);
    const other = drawn === 0 ? 1 : 0;
    const text = listOf([record.answers[other].text, record.answers[drawn].text]);
    const { rewards } = task.rewards(prompts, rolloutOf([text, text], [0, 0])) as { rewards: { rewards: Float32Array } };
    expect(Array.from(rewards.rewards.subarray(0, 2))).toEqual([0, 1]);
    // one epoch of the rows sampler: Σ respondents draws, each (question, cluster) as often as its count
    const epoch = data.train.reduce((n, r) => n + respondentsOf(r), 0);
    const big = createTask(resolveConfig({ recipe: 'rank-grpo', task: 'qa', groups: epoch, candidates: 2 }), tinyTokenizer());
    const draws = (big.prompts(0) as unknown as { draws: { request: number; respondent: number; epoch: number }[] }).draws;
    expect(draws.every((d) => d.epoch === 0)).toBe(true);
    const seen = new Map<string, number>();
    for (const d of draws) {
      const key = `${d.request}:${clusterOfRespondent(data.train[d.request], d.respondent)}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    data.train.forEach((r, q) => r.answers.forEach((a, c) => expect(seen.get(`${q}:${c}`) ?? 0).toBe(a.count)));
  });

  it('the task\'s metrics on all 52 real questions: naming the ten largest clusters gives their share of respondents', () => {
    const records = qaData(qa('remark').data);
    const all = [...records.train, ...records.validation, ...records.test];
    const largest = (r: (typeof all)[number]) => [...r.answers].sort((a, b) => b.count - a.count).slice(0, 10);
    const texts = all.map((r) => largest(r).map((a, i) => `${i + 1}. ${a.text}`).join('\n'));
    const m = evaluateQa(texts, all, 10);
    const share = all.map((r) => largest(r).reduce((n, a) => n + a.count, 0) / respondentsOf(r));
    expect(m.countRecall).toBeCloseTo(share.reduce((a, b) => a + b, 0) / all.length, 12);
    expect(m.unionRecall).toBeCloseTo(all.reduce((n, r) => n + Math.min(10, r.answers.length) / r.answers.length, 0) / all.length, 12);
    expect(m.countRecall).toBeGreaterThan(0.9); // ProtoQA's ten largest clusters hold most respondents
  });

  it('the rank-wise advantages land on each answer\'s tokens (rank k on the k-th line), none on the newlines between', () => {
    const config = qa('remark', { rewards: { ranks: 2 } });
    const task = createTask(config, tinyTokenizer());
    const prompts = task.prompts(0);
    const record = qaData(config.data).train[(prompts as unknown as { draws: { request: number }[] }).draws[0].request];
    const text = listOf([record.answers[0].text, 'xyzzy']);
    const rollout = rolloutOf([text, listOf(['xyzzy', 'plugh'])], [1, 1]);
    const { rewards } = task.rewards(prompts, rollout);
    const { signal } = task.advantages(rewards, rollout);
    const offsets = tinyTokenizer().offsets(rollout.completions[0]);
    const newline = text.indexOf('\n');
    for (let t = 0; t < rollout.completions[0].length; t++) {
      const [start, end] = [offsets[2 * t], offsets[2 * t + 1]];
      if (end <= newline) expect(signal.segments![t]).toBe(0);
      else if (start > newline) expect(signal.segments![t]).toBe(1);
    }
    // the first list hit rank 1 and the second did not: rank-1 tokens of the first row get a positive advantage
    const first = Array.from(rollout.completions[0].keys()).find((t) => signal.segments![t] === 0)!;
    expect(signal.advantages[first]).toBeGreaterThan(0);
  });
});

describe('QA end to end', () => {
  for (const recipe of ['remark', 'rank-grpo'] as const) {
    it(`${recipe} on the bundled ProtoQA questions: finite step metrics, validation and test recall, a report`, async () => {
      const config = resolveConfig({
        recipe, task: 'qa', steps: 3, groups: 2, candidates: 3, learningRate: 1e-2, generation: { maxNewTokens: 24 },
        validation: { every: 2, prompts: 3 }, testPrompts: 4, checkpointEvery: 3,
      });
      const runDir = join(tempRunRoot(), `qa-${recipe}`);
      const result = await train({ config, policy: await tinyPolicy(3), runDir, loadPolicy: (d) => BuiltinPolicy.load(d) });
      expect(result.steps).toBe(3);
      const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(rows).toHaveLength(3);
      for (const row of rows) {
        for (const key of ['rewardMean', 'zeroRewardGroups', 'answersPerList', 'unmatchedAnswerFraction', 'equalRewardCells']) {
          expect(Number.isFinite(row.stats[key]), key).toBe(true);
        }
      }
      expect(Object.keys(result.test!)).toEqual(['respondentRecall', 'clusterRecall']);
      for (const value of Object.values(result.test!)) expect(value).toBeGreaterThanOrEqual(0);
      for (const value of Object.values(result.test!)) expect(value).toBeLessThanOrEqual(1);
      expect(JSON.parse(readFileSync(join(runDir, 'test.json'), 'utf8')).completions).toHaveLength(4);
      expect(existsSync(join(runDir, 'report', 'report.md'))).toBe(true);
    }, 120_000);
  }

  it('grpo train --help names the QA task', async () => {
    const io = capture();
    expect(await main(['train', '--help'])).toBe(0);
    for (const flag of ['--task qa', '--data.qa ', '--data.qaValidation', '--data.qaTest']) expect(io.out()).toContain(flag);
  });
});
