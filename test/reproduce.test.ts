// `grpo reproduce --quick --seeds 0,1` end to end through bin/grpo.js: every arm once per seed from one SFT
// checkpoint, per-seed results and results pooled over the seeds in summary.json, per-seed reports; and the
// flags of the full run (three seeds by default, a clear error for bad --seeds).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { summaryProblems } from '../lib/studies/summary.js';
import { pooledValue, readJsonFile, runCli, testFileOf } from './helpers/studies.js';

interface Summary {
  command: string;
  scale: string;
  seeds: number[];
  recommend: {
    arms: string[];
    perSeed: Array<{ seed: number; baseline: string; arms: Record<string, { metrics: Record<string, { estimate: number }> }> }>;
    pooled: { test: Record<string, Record<string, { estimate: number }>> };
  };
}

describe('grpo reproduce', () => {
  let out = '';
  let run: ReturnType<typeof runCli>['run'];
  beforeAll(() => {
    ({ out, run } = runCli(['reproduce', '--quick', '--seeds', '0,1'], 200_000));
  }, 210_000);

  it('runs every arm once per seed and pools the seeds per request', () => {
    expect(run.status, run.stderr).toBe(0);
    const summary = readJsonFile<Summary>(join(out, 'summary.json'));
    expect(summaryProblems(summary)).toEqual([]);
    expect([summary.command, summary.scale, summary.seeds]).toEqual(['grpo reproduce --quick --seeds 0,1', 'quick', [0, 1]]);
    const rec = summary.recommend;
    expect(rec.perSeed.map((s) => s.seed)).toEqual([0, 1]);
    for (const arm of rec.arms.filter((a) => a !== 'rank-grpo')) {
      const files = [0, 1].map((seed) => testFileOf(out, seed, arm));
      expect(rec.pooled.test[arm].rowRecall.estimate).toBeCloseTo(pooledValue(files, 'rowRecall'), 12);
      expect(rec.pooled.test[arm].relevantRecall.estimate).toBeCloseTo(pooledValue(files, 'relevantRecall'), 12);
      files.forEach((f, seed) => expect(rec.perSeed[seed].arms[arm].metrics.rowRecall.estimate).toBeCloseTo(f.values.rowRecall, 12));
    }
    const baselines = rec.perSeed.map((s) => testFileOf(out, s.seed, s.baseline));
    expect(rec.pooled.test['rank-grpo'].rowRecall.estimate).toBeCloseTo(pooledValue(baselines, 'rowRecall'), 12);
    for (const seed of [0, 1]) expect(existsSync(join(out, 'recommend', 'report', `seed-${seed}`, 'report.md'))).toBe(true);
  });

  it('defaults to three seeds and refuses malformed --seeds before training anything', () => {
    const help = runCli(['reproduce', '--help'], 30_000).run;
    expect(help.stdout).toMatch(/--seeds.*default 0,1,2/);
    for (const bad of ['0,0', '1,x', '-1']) {
      const refused = runCli(['reproduce', '--seeds', bad], 30_000);
      expect(refused.run.status).toBe(2); // a user error
      expect(refused.run.stderr).toContain('Flag --seeds: expected distinct non-negative integers');
      expect(existsSync(join(refused.out, 'recommend'))).toBe(false);
    }
  });
});
