// Reading the output of `grpo demo` / `grpo reproduce` in tests: run the compiled CLI, then read summary.json,
// run directories and the diagnostics file it wrote.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { compareZeroRewards } from '../../lib/eval/diagnostics.js';
import type { TestFile } from '../../lib/trainer/run-report.js';
import { moviesData } from '../../lib/trainer/tasks.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `grpo <args> --out <temp>` through bin/grpo.js (the compiled dist/); returns the folder and the process result. */
/** Runs bin/grpo.js with `--out` a fresh temporary folder, or `out` when given (to run into an earlier output). */
export function runCli(args: readonly string[], timeoutMs: number, out = mkdtempSync(join(tmpdir(), 'grpo-study-'))) {
  expect(existsSync(join(root, 'dist', 'cli', 'main.js')), 'dist/ is missing: run npm run build:ts').toBe(true);
  const run = spawnSync(process.execPath, [join(root, 'bin', 'grpo.js'), ...args, '--out', out], { encoding: 'utf8', timeout: timeoutMs });
  return { out, run };
}

export const readJsonFile = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

export const testFileOf = (out: string, seed: number, arm: string) => readJsonFile<TestFile>(join(out, 'recommend', 'runs', `seed-${seed}`, arm, 'test.json'));

/** Σ sum / Σ count of one metric over several test files (the pooled value). */
export function pooledValue(files: readonly TestFile[], metric: string): number {
  const sum = files.reduce((s, f) => s + f.series[metric].sum.reduce((a, b) => a + b, 0), 0);
  const count = files.reduce((s, f) => s + f.series[metric].count.reduce((a, b) => a + b, 0), 0);
  return sum / count;
}

/** The zero-reward fractions recomputed from the saved diagnostic rollouts with the rank-grpo arm's reward options. */
export function recomputedZeroRewards(out: string, seed: number) {
  const diagnostics = readJsonFile<{ rollouts: { requests: number[]; respondents: number[]; lists: string[][] } }>(join(out, 'recommend', 'diagnostics.json'));
  const config = readJsonFile<{ rewards: { ranks: number; shape: 'hit'; yearTolerance: number; catalog: 'full' | 'benchmark' | 'none' }; data: { moviesDir: string } }>(
    join(out, 'recommend', 'runs', `seed-${seed}`, 'rank-grpo', 'config.json'));
  const data = moviesData(config.data.moviesDir);
  const r = config.rewards;
  const requests = diagnostics.rollouts.requests.map((i) => data.validation[i]);
  return compareZeroRewards(diagnostics.rollouts.lists, requests, {
    k: r.ranks, shape: r.shape, yearTolerance: r.yearTolerance, catalog: r.catalog === 'none' ? undefined : data.catalogs[r.catalog],
    respondents: diagnostics.rollouts.respondents,
  });
}
