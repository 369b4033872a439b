// `grpo demo --quick` end to end through bin/grpo.js (the compiled CLI in dist/, built by `npm test`'s
// pretest): it finishes in under 2 minutes and writes the summary table, the run directories and the
// reports with their figures.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('grpo demo --quick', () => {
  it('runs SFT, both pairs, evaluation and reports in under 2 minutes', () => {
    expect(existsSync(join(root, 'dist', 'cli', 'main.js')), 'dist/ is missing: run npm run build:ts').toBe(true);
    const out = mkdtempSync(join(tmpdir(), 'grpo-demo-'));
    const started = performance.now();
    const run = spawnSync(process.execPath, [join(root, 'bin', 'grpo.js'), 'demo', '--quick', '--out', out], { encoding: 'utf8', timeout: 150_000 });
    const seconds = (performance.now() - started) / 1000;
    expect(run.status, run.stderr).toBe(0);
    expect(seconds).toBeLessThan(120);
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(run.stdout).toContain(summary.split('\n')[0]);
    for (const heading of ['ReMaRk vs Rank-GRPO', 'CCR vs GRPO']) expect(summary).toContain(heading);
    for (const row of ['test relevantRecall', 'test unionRecall', 'zero-reward', 'steps to baseline', 'test accuracy', 'tokens per step', 'informative-group fraction']) {
      expect(summary).toContain(row);
    }
    for (const recipe of ['rank-grpo', 'remark', 'grpo', 'ccr']) {
      const dir = join(out, 'runs', recipe);
      const steps = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n');
      expect(steps.length).toBe(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).steps);
      expect(JSON.parse(readFileSync(join(dir, 'test.json'), 'utf8')).values).toBeTypeOf('object');
    }
    for (const pair of ['recommend', 'ccr']) {
      const report = readFileSync(join(out, 'report', pair, 'report.md'), 'utf8');
      const figure = /\]\(([^)]+\.svg)\)/.exec(report)![1];
      expect(readFileSync(join(out, 'report', pair, figure), 'utf8')).toMatch(/^<svg/);
    }
  }, 160_000);
});
