// The test comparison of the recommendation arms: per seed, each arm's selected checkpoint on the test split
// (request-bootstrap intervals), its paired difference against the rank-grpo baseline, the steps (and training
// seconds) it needs to reach the baseline's best validation value, and the exact-K share; pooled over seeds by
// summing each request's per-seed sums and counts (the same test requests in every seed).
import { bootstrap, pairedBootstrap, type RequestSeries } from '../eval/bootstrap.js';
import { stepsToTarget, type CurvePoint } from '../eval/curves.js';
import { rankRewardsBatch } from '../rewards/recommend.js';
import type { TrainerConfig } from '../trainer/config.js';
import type { TestFile } from '../trainer/run-report.js';
import { readJson, readJsonlRows, RunDir } from '../trainer/run-dir.js';
import type { MoviesData } from '../trainer/task-recommend.js';
import { rewardOptionsOf } from './recommend-diagnostics.js';

/** Test metrics reported with intervals (all at the study's K). */
export const TEST_METRICS = Object.freeze([
  'rowRecall', 'rowNdcg', 'requestRecall', 'requestNdcg', 'unionRecall', 'relevantRecall', 'relevantNdcg', 'hitLogPopularity', 'truthLogPopularity',
] as const);

/** Metrics whose paired differences against the baseline are reported (in points). */
export const DIFFERENCE_METRICS = Object.freeze(['rowRecall', 'rowNdcg', 'requestRecall', 'requestNdcg', 'relevantRecall', 'relevantNdcg'] as const);

export interface Estimate { estimate: number; low: number; high: number }

export interface ArmTest {
  checkpointStep: number;
  /** best validation value of the selection metric, and its step */
  bestValidation: number;
  metrics: Record<string, Estimate>;
  /** test lists with exactly K parsable items */
  exactKShare: number;
}

export interface StepsToBaseline {
  /** the baseline's best validation value and its step */
  target: number;
  baselineStep: number;
  /** false when the baseline's best is its first validation: every arm "reaches" it where it starts, so no speed is defined */
  defined: boolean;
  /** per arm: first step reaching the target (linear between validations; null: never or not defined), its training seconds and ratios */
  arms: Record<string, { step: number | null; seconds: number | null; stepRatio: number | null; secondsRatio: number | null }>;
}

export interface SeedResult {
  seed: number;
  /** the rank-grpo run used as baseline (the better scaling by validation when several ran) */
  baseline: string;
  arms: Record<string, ArmTest>;
  /** arm − baseline on the same test requests, points (× 100), paired request bootstrap */
  differences: Record<string, Record<string, Estimate>>;
  /** remark − rank-grpo-requests (the union reward alone, the paper's +1.40 pt), points */
  remarkOverAblation: Record<string, Estimate>;
  stepsToBaseline: StepsToBaseline;
}

/** The arms of the paper's second comparison: the union reward with the sampling held fixed. */
const [UNION_ARM, ABLATION_ARM] = ['remark', 'rank-grpo-requests'];

interface RunData {
  test: TestFile;
  validation: CurvePoint[];
}

const plain = ({ estimate, low, high }: Estimate): Estimate => ({ estimate, low, high });
const seriesOf = (s: { sum: number[]; count: number[] }): RequestSeries => ({ sum: Float64Array.from(s.sum), count: Float64Array.from(s.count) });

async function readRun(dir: string, metric: string): Promise<RunData> {
  const run = new RunDir(dir);
  const validation = await readJsonlRows<{ step: number; elapsed: number; values: Record<string, number> }>(run.file('validation'));
  return { test: await readJson<TestFile>(run.file('test')), validation: validation.map((v) => ({ step: v.step, value: v.values[metric], time: v.elapsed })) };
}

/** The highest validation point (the first of equals: the selected checkpoint). */
function bestPoint(curve: readonly CurvePoint[]): CurvePoint {
  return curve.reduce((best, p) => (p.value > best.value ? p : best), curve[0]);
}

function exactKShare(completions: readonly string[], config: TrainerConfig, data: MoviesData): number {
  const requests = data.test.slice(0, completions.length);
  const { length } = rankRewardsBatch(completions.map((c) => [c]), requests, { ...rewardOptionsOf(config, data), target: 'union' });
  return length.filter((l) => l === 0).length / Math.max(1, length.length);
}

function armTest(run: RunData, config: TrainerConfig, data: MoviesData): ArmTest {
  const present = TEST_METRICS.filter((m) => run.test.series[m]);
  const intervals = bootstrap(present.map((m) => seriesOf(run.test.series[m])), { resamples: 2000, seed: config.seed });
  return {
    checkpointStep: run.test.checkpointStep,
    bestValidation: bestPoint(run.validation).value,
    metrics: Object.fromEntries(present.map((m, i) => [m, plain(intervals[i])])),
    exactKShare: exactKShare(run.test.completions, config, data),
  };
}

/** Paired differences (points) of every difference metric: `a` − `b`. */
export function differences(a: TestFile['series'], b: TestFile['series'], seed: number): Record<string, Estimate> {
  const metrics = DIFFERENCE_METRICS.filter((m) => a[m] && b[m]);
  return Object.fromEntries(metrics.map((m) => [m, plain(pairedBootstrap(seriesOf(a[m]), seriesOf(b[m]), { resamples: 2000, seed, scale: 100 }))]));
}

function stepsToBaseline(runs: Record<string, RunData>, baseline: string): StepsToBaseline {
  const base = runs[baseline].validation;
  const best = bestPoint(base);
  const defined = best.value > base[0].value;
  const arms = Object.fromEntries(Object.entries(runs).filter(([name]) => name !== baseline).map(([name, run]) => {
    const r = stepsToTarget(run.validation, base, best.step);
    return [name, { step: r.stepA, seconds: r.timeA, stepRatio: r.ratio, secondsRatio: r.timeRatio }];
  }));
  return { target: best.value, baselineStep: best.step, defined, arms };
}

/**
 * The results of one seed. `dirs`: arm name → run directory; `baselines`: the rank-grpo arms, the one with
 * the best validation value becomes the baseline.
 */
export async function seedResult(
  seed: number, dirs: Record<string, string>, baselines: readonly string[], config: TrainerConfig, data: MoviesData,
): Promise<{ result: SeedResult; tests: Record<string, TestFile> }> {
  const metric = config.validation.metric;
  const runs = Object.fromEntries(await Promise.all(Object.entries(dirs).map(async ([name, dir]) => [name, await readRun(dir, metric)] as const)));
  const baseline = baselines.reduce((a, b) => (bestPoint(runs[b].validation).value > bestPoint(runs[a].validation).value ? b : a));
  const others = Object.keys(runs).filter((name) => !baselines.includes(name));
  const result: SeedResult = {
    seed,
    baseline,
    arms: Object.fromEntries(Object.entries(runs).map(([name, run]) => [name, armTest(run, { ...config, seed }, data)])),
    differences: Object.fromEntries(others.map((name) => [name, differences(runs[name].test.series, runs[baseline].test.series, seed)])),
    remarkOverAblation: runs[UNION_ARM] && runs[ABLATION_ARM] ? differences(runs[UNION_ARM].test.series, runs[ABLATION_ARM].test.series, seed) : {},
    stepsToBaseline: stepsToBaseline(Object.fromEntries([[baseline, runs[baseline]], ...others.map((n) => [n, runs[n]] as const)]), baseline),
  };
  return { result, tests: Object.fromEntries(Object.entries(runs).map(([name, run]) => [name, run.test])) };
}

/** Per-request sums and counts added over seeds (each seed evaluates the same test requests). */
export function poolSeries(tests: readonly TestFile['series'][]): TestFile['series'] {
  const metrics = Object.keys(tests[0] ?? {}).filter((m) => tests.every((t) => t[m]));
  return Object.fromEntries(metrics.map((m) => [m, {
    sum: tests[0][m].sum.map((_, i) => tests.reduce((s, t) => s + t[m].sum[i], 0)),
    count: tests[0][m].count.map((_, i) => tests.reduce((s, t) => s + t[m].count[i], 0)),
  }]));
}

export interface PooledResults {
  /** arm → metric → estimate with interval, the baseline under "rank-grpo" (each seed's selected scaling) */
  test: Record<string, Record<string, Estimate>>;
  /** arm − baseline, points */
  differences: Record<string, Record<string, Estimate>>;
  /** remark − rank-grpo-requests, points */
  remarkOverAblation: Record<string, Estimate>;
}

/** Pooled over seeds: each arm's test series summed per request, then bootstrapped; differences paired. */
export function pooledResults(perSeed: ReadonlyArray<{ result: SeedResult; tests: Record<string, TestFile> }>, seed: number): PooledResults {
  const arms = Object.keys(perSeed[0].result.differences);
  const pooled: Record<string, TestFile['series']> = {
    'rank-grpo': poolSeries(perSeed.map((s) => s.tests[s.result.baseline].series)),
    ...Object.fromEntries(arms.map((arm) => [arm, poolSeries(perSeed.map((s) => s.tests[arm].series))])),
  };
  const test = Object.fromEntries(Object.entries(pooled).map(([arm, series]) => {
    const metrics = TEST_METRICS.filter((m) => series[m]);
    const intervals = bootstrap(metrics.map((m) => seriesOf(series[m])), { resamples: 2000, seed });
    return [arm, Object.fromEntries(metrics.map((m, i) => [m, plain(intervals[i])]))];
  }));
  return {
    test,
    differences: Object.fromEntries(arms.map((arm) => [arm, differences(pooled[arm], pooled['rank-grpo'], seed)])),
    remarkOverAblation: pooled[UNION_ARM] && pooled[ABLATION_ARM] ? differences(pooled[UNION_ARM], pooled[ABLATION_ARM], seed) : {},
  };
}
