// The recommendation study's test comparison on hand-made run folders: the baseline is the rank-grpo scaling with
// the better validation value, steps-to-target interpolates to the baseline's best, paired differences and
// the pooled values are the per-request sums of the seeds, and the exact-K share counts lists of exactly K items.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pooledResults, seedResult } from '../lib/studies/recommend-results.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { moviesData } from '../lib/trainer/tasks.js';

const config = resolveConfig({ recipe: 'rank-grpo', rewards: { ranks: 2, catalog: 'none' }, validation: { metric: 'rowRecall' } });
const data = moviesData('');

/** A run folder with a validation curve [step, value, elapsed] and per-request rowRecall sums (count 1 each). */
function runFolder(root: string, name: string, curve: number[][], recall: number[], completions: string[]) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'validation.jsonl'), curve.map(([step, value, elapsed]) => `${JSON.stringify({ step, elapsed, values: { rowRecall: value } })}\n`).join(''));
  const series = { rowRecall: { sum: recall, count: recall.map(() => 1) } };
  writeFileSync(join(dir, 'test.json'), JSON.stringify({ checkpointStep: curve.reduce((b, p) => (p[1] > b[1] ? p : b))[0], values: {}, series, completions }));
  return dir;
}

function seedFolders(shift: number) {
  const root = mkdtempSync(join(tmpdir(), 'grpo-results-'));
  const lists = ['1. Heat (1995)\n2. Up (2009)', '1. Heat (1995)', '1. Heat (1995)\n2. Up (2009)\n3. Big (1988)'];
  return {
    'rank-grpo': runFolder(root, 'rank-grpo', [[10, 0.1, 100], [20, 0.2, 200]], [0, 0.5, 0.5], lists),
    'rank-grpo-batch': runFolder(root, 'rank-grpo-batch', [[10, 0.1, 100], [20, 0.3, 200]], [0, 0.5, 1], lists),
    remark: runFolder(root, 'remark', [[10, 0.2, 100], [20, 0.4, 200]], [0.5 + shift, 1, 1], lists),
    'rank-grpo-requests': runFolder(root, 'rank-grpo-requests', [[10, 0.1, 100], [20, 0.25, 200]], [0, 0, 1], lists),
  };
}

describe('seedResult and pooledResults', () => {
  it('picks the better rank-grpo scaling by validation and measures every arm against it', async () => {
    const { result } = await seedResult(0, seedFolders(0), ['rank-grpo', 'rank-grpo-batch'], config, data);
    expect(result.baseline).toBe('rank-grpo-batch');
    expect(Object.keys(result.differences)).toEqual(['remark', 'rank-grpo-requests']);
    expect(result.differences.remark.rowRecall.estimate).toBeCloseTo(((2.5 - 1.5) / 3) * 100, 10);
    expect(result.remarkOverAblation.rowRecall.estimate).toBeCloseTo(((2.5 - 1) / 3) * 100, 10); // the union reward at fixed sampling
    expect(result.stepsToBaseline).toMatchObject({ target: 0.3, baselineStep: 20, defined: true });
    expect(result.stepsToBaseline.arms.remark.step).toBeCloseTo(15, 10); // 0.2 at 10, 0.4 at 20: 0.3 halfway
    expect(result.stepsToBaseline.arms.remark.seconds).toBeCloseTo(150, 10);
    expect(result.stepsToBaseline.arms['rank-grpo-requests'].step).toBeNull(); // 0.25 < 0.3: never
    expect(result.arms.remark.exactKShare).toBeCloseTo(1 / 3, 10); // K = 2: only the first list has exactly two items
    expect(result.arms['rank-grpo-batch'].bestValidation).toBe(0.3);
  });

  it('pools seeds by adding per-request sums and counts, the baseline being each seed\'s own', async () => {
    const seeds = [await seedResult(0, seedFolders(0), ['rank-grpo', 'rank-grpo-batch'], config, data),
      await seedResult(1, seedFolders(-0.5), ['rank-grpo', 'rank-grpo-batch'], config, data)];
    const pooled = pooledResults(seeds, 0);
    expect(pooled.test.remark.rowRecall.estimate).toBeCloseTo((2.5 + 2) / 6, 10);
    expect(pooled.test['rank-grpo'].rowRecall.estimate).toBeCloseTo(3 / 6, 10);
    expect(pooled.differences.remark.rowRecall.estimate).toBeCloseTo(((4.5 - 3) / 6) * 100, 10);
    expect(pooled.remarkOverAblation.rowRecall.estimate).toBeCloseTo(((4.5 - 2) / 6) * 100, 10);
    const { low, high } = pooled.differences.remark.rowRecall;
    expect(low).toBeLessThanOrEqual(high);
  });
});
