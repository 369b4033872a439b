// `grpo demo --quick` end to end through bin/grpo.js (the compiled CLI in dist/, built by `npm test`'s pretest):
// both studies, summary.md and summary.json (docs/summary-json.md) consistent with the runs they summarise, and
// the reports with their figures. The spawn timeout is the only guard on time (no timed assertion).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { summaryProblems } from '../lib/studies/summary.js';
import { readJsonFile, recomputedZeroRewards, runCli, testFileOf } from './helpers/studies.js';

interface Summary {
  seeds: number[];
  recommend: {
    arms: string[];
    zeroRewardGroups: { respondent: number; union: number };
    zeroRewardCells: { respondent: number; union: number };
    perSeed: Array<{ seed: number; baseline: string; arms: Record<string, { checkpointStep: number; metrics: Record<string, { estimate: number | null }> }> }>;
    pooled: { test: Record<string, Record<string, { estimate: number | null }>> };
  };
}

describe('grpo demo --quick', () => {
  let out = '';
  let run: ReturnType<typeof runCli>['run'];
  beforeAll(() => {
    ({ out, run } = runCli(['demo', '--quick'], 150_000));
  }, 160_000);

  it('exits 0 and prints the summary it writes to summary.md', () => {
    expect(run.status, run.stderr).toBe(0);
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(run.stdout).toContain(summary.split('\n')[0]);
    for (const heading of ['ReMaRk vs Rank-GRPO', 'CCR vs single-problem GRPO']) expect(summary).toContain(heading);
    for (const row of ['zero-reward groups, one drawn respondent', 'zero-reward groups, union of respondents', 'respondent variance share',
      'rowRecall@5', 'relevantRecall@5', 'hitLogPopularity@5', 'remark − rank-grpo', 'rank-grpo-requests − rank-grpo', 'exact-5 share', 'tokens per step']) {
      expect(summary).toContain(row);
    }
  });

  it('summary.json has every documented field, and its numbers are those of the runs and the saved rollouts', () => {
    const summary = readJsonFile<Summary>(join(out, 'summary.json'));
    expect(summaryProblems(summary)).toEqual([]);
    const rec = summary.recommend;
    expect(rec.arms).toEqual(['rank-grpo', 'rank-grpo-requests', 'remark', 'remark-mean']);
    const [seed] = summary.seeds;
    for (const arm of rec.arms) {
      const test = testFileOf(out, seed, arm);
      const reported = rec.perSeed[0].arms[arm];
      expect(reported.checkpointStep).toBe(test.checkpointStep);
      expect(reported.metrics.rowRecall.estimate).toBeCloseTo(test.values.rowRecall, 12);
      expect(reported.metrics.relevantRecall.estimate).toBeCloseTo(test.values.relevantRecall, 12);
      const dir = join(out, 'recommend', 'runs', `seed-${seed}`, arm);
      const config = readJsonFile<{ recipe: string; steps: number; seed: number; validation: { metric: string } }>(join(dir, 'config.json'));
      expect([config.recipe, config.seed, config.validation.metric]).toEqual([arm, seed, 'rowRecall']);
      expect(readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').length).toBe(config.steps);
    }
    const baseline = testFileOf(out, seed, rec.perSeed[0].baseline);
    expect(rec.pooled.test['rank-grpo'].rowRecall.estimate).toBeCloseTo(baseline.values.rowRecall, 12); // one seed: pooled = that seed
    const recomputed = recomputedZeroRewards(out, seed);
    expect(rec.zeroRewardGroups).toEqual({ respondent: recomputed.respondent.requests, union: recomputed.union.requests });
    expect(rec.zeroRewardCells).toEqual({ respondent: recomputed.respondent.cells, union: recomputed.union.cells });
    expect(rec.zeroRewardGroups.union).toBeLessThanOrEqual(rec.zeroRewardGroups.respondent); // the union holds every respondent's films
  });

  it('writes the reports with their figures', () => {
    const report = readFileSync(join(out, 'recommend', 'report', 'report.md'), 'utf8');
    for (const figure of ['zero-rewards.svg', 'variance-share.svg', 'validation.svg']) {
      expect(report).toContain(`(${figure})`);
      expect(readFileSync(join(out, 'recommend', 'report', figure), 'utf8')).toMatch(/^<svg/);
    }
    const ccr = readFileSync(join(out, 'ccr', 'report', 'report.md'), 'utf8');
    const figure = /\]\(([^)]+\.svg)\)/.exec(ccr)![1];
    expect(readFileSync(join(out, 'ccr', 'report', figure), 'utf8')).toMatch(/^<svg/);
  });
});
