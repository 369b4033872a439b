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

  it('reruns one study with --studies and reuses the saved result of the other', () => {
    const first = readJsonFile<Summary & { studyMinutes: Record<string, number>; ccr: Record<string, unknown> }>(join(out, 'summary.json'));
    const refused = runCli(['reproduce', '--quick', '--seeds', '0', '--studies', 'ccr'], 30_000, out).run;
    expect(refused.status).toBe(2); // the saved recommendation part is of seeds 0,1
    expect(refused.stderr).toContain('its saved result in');
    expect(existsSync(join(out, 'ccr', 'part.json'))).toBe(true); // refused before anything was replaced
    const rerun = runCli(['reproduce', '--quick', '--seeds', '0,1', '--studies', 'ccr'], 200_000, out).run;
    expect(rerun.status, rerun.stderr).toBe(0);
    const second = readJsonFile<typeof first>(join(out, 'summary.json'));
    expect(summaryProblems(second)).toEqual([]);
    expect(second.recommend).toEqual(first.recommend);
    expect(second.studyMinutes.recommend).toBe(first.studyMinutes.recommend);
    expect(second.ccr.tokensPerStep).toEqual(first.ccr.tokensPerStep); // the rerun study is deterministic
    expect(runCli(['reproduce', '--studies', 'ccr,rec'], 30_000).run.stderr).toContain('Flag --studies: expected distinct names from recommend, ccr');
    const alone = runCli(['reproduce', '--quick', '--seeds', '0', '--studies', 'ccr'], 200_000);
    expect(alone.run.status, alone.run.stderr).toBe(0);
    expect(alone.run.stdout).toContain('holds no result of the recommend study yet');
    expect([existsSync(join(alone.out, 'ccr', 'part.json')), existsSync(join(alone.out, 'summary.json'))]).toEqual([true, false]);
  }, 400_000);

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
