// The recommendation study (issue 18, "ReMaRk vs Rank-GRPO"): one SFT checkpoint; mechanism diagnostics on the
// same rollouts of it; then, for every seed and with the same steps, the arms rank-grpo (row sampling, one
// respondent; both std scalings at full scale, the better by validation is the baseline), rank-grpo-requests
// (request sampling, one respondent: the sampling ablation), remark (request sampling, union) and remark-mean;
// each validated at fixed intervals, selected on validation row Recall@K and tested; results per seed and pooled.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadPolicy } from '../cli/models.js';
import { trainWithProgress } from '../cli/run-training.js';
import type { BandPoint } from '../eval/report-svg.js';
import { writeJsonAtomic, readJsonlRows, RunDir } from '../trainer/run-dir.js';
import type { ConfigInput, TrainerConfig } from '../trainer/config.js';
import { resolveConfig } from '../trainer/recipes.js';
import { compareRuns } from '../trainer/run-report.js';
import { moviesData } from '../trainer/tasks.js';
import { mechanismDiagnostics } from './recommend-diagnostics.js';
import { studyFigures } from './recommend-figures.js';
import { recommendMarkdown } from './recommend-markdown.js';
// TEMPORARY: d-sft's lib/studies/recommend-policy.ts replaces this import at merge (same exports).
import { recommendTaskOptions, trainRecommendPolicy } from './recommend-policy-fallback.js';
import { pooledResults, seedResult } from './recommend-results.js';
import { RECOMMEND_SETTINGS } from './recommend-settings.js';
import type { RecommendSummary } from './recommend-summary.js';
import type { StudyContext, StudyResult } from './study.js';

/** The comparison arms after the baseline, in report order. */
export const RECOMMEND_ARMS = Object.freeze(['rank-grpo-requests', 'remark', 'remark-mean'] as const);

/** The rank-grpo arms of a scale: name → the layer that makes it (group std is the recipe's own). */
function baselineArms(scalings: ReadonlyArray<'group' | 'batch'>): Record<string, ConfigInput> {
  return Object.fromEntries(scalings.map((scale) => [scale === 'group' ? 'rank-grpo' : 'rank-grpo-batch',
    { recipe: 'rank-grpo', ...(scale === 'batch' && { advantages: { scale } as ConfigInput['advantages'] }) }]));
}

async function validationCurves(dirs: Record<string, string>, seed: number, metric: string): Promise<BandPoint[]> {
  const rows = await Promise.all(Object.entries(dirs).map(async ([arm, dir]) =>
    (await readJsonlRows<{ step: number; values: Record<string, number> }>(new RunDir(dir).file('validation')))
      .map((v) => ({ run: `${arm} (seed ${seed})`, step: v.step, value: v.values[metric] }))));
  return rows.flat();
}

export async function runRecommendStudy(ctx: StudyContext): Promise<StudyResult<RecommendSummary>> {
  const s = RECOMMEND_SETTINGS[ctx.scale];
  const configFor = (layer: ConfigInput, seed: number): TrainerConfig =>
    resolveConfig(s.arms, recommendTaskOptions(ctx.scale), layer, ctx.overrides, { seed, device: ctx.device });
  const policy = await trainRecommendPolicy(ctx);
  const base = configFor({ recipe: 'rank-grpo' }, ctx.seeds[0]);
  const data = moviesData(base.data.moviesDir);

  const phase = ctx.reporter.phase(`diagnostics: ${s.diagnosticRequests} validation requests × ${s.diagnosticLists} sampled lists of the SFT policy`, 1, 'passes');
  const sftPolicy = await loadPolicy(policy.policyDir, base.device);
  const diagnostics = await mechanismDiagnostics(sftPolicy, base, data, s.diagnosticRequests, s.diagnosticLists);
  sftPolicy.dispose();
  await writeJsonAtomic(join(ctx.out, 'diagnostics.json'), diagnostics);
  phase.done(`valid items ${diagnostics.validItemFraction.toFixed(3)}; zero-reward groups ${diagnostics.zeroRewardGroups.respondent.toFixed(3)} (respondent) vs ${diagnostics.zeroRewardGroups.union.toFixed(3)} (union)`);

  const layers: Record<string, ConfigInput> = { ...baselineArms(s.baselineScalings), ...Object.fromEntries(RECOMMEND_ARMS.map((r) => [r, { recipe: r }])) };
  const perSeed = [];
  const curves: BandPoint[] = [];
  for (const seed of ctx.seeds) {
    const dirs: Record<string, string> = {};
    for (const [arm, layer] of Object.entries(layers)) {
      const config = configFor(layer, seed);
      dirs[arm] = join(ctx.out, 'runs', `seed-${seed}`, arm);
      await trainWithProgress(ctx.reporter, `${arm} seed ${seed} (${config.steps} steps)`, { config, policy: await loadPolicy(policy.policyDir, config.device), runDir: dirs[arm] });
    }
    perSeed.push(await seedResult(seed, dirs, Object.keys(baselineArms(s.baselineScalings)), base, data));
    curves.push(...(await validationCurves(dirs, seed, base.validation.metric)));
    await compareRuns(Object.values(dirs), join(ctx.out, 'report', `seed-${seed}`), {
      title: `ReMaRk vs Rank-GRPO, seed ${seed} (test split, greedy lists, K = ${base.rewards.ranks})`, names: Object.keys(dirs),
    });
  }

  const summary: RecommendSummary = {
    K: base.rewards.ranks, steps: base.steps, seeds: [...ctx.seeds], arms: Object.keys(layers),
    diagnostics: { requests: diagnostics.requests, lists: diagnostics.lists },
    validItemFraction: diagnostics.validItemFraction,
    zeroRewardGroups: diagnostics.zeroRewardGroups, zeroRewardCells: diagnostics.zeroRewardCells, varianceShare: diagnostics.varianceShare,
    prerequisites: { validItems: diagnostics.validItemFraction >= 0.5, zeroRewardGroups: diagnostics.zeroRewardGroups.respondent < 0.9 },
    perSeed: perSeed.map((p) => p.result),
    pooled: pooledResults(perSeed, ctx.seeds[0]),
  };
  const markdown = recommendMarkdown(summary, base);
  const reportDir = join(ctx.out, 'report');
  const figures = await studyFigures(diagnostics, curves, base.validation.metric);
  await Promise.all(Object.entries(figures).map(([file, svg]) => writeFile(join(reportDir, file), svg)));
  const links = ['![Zero-reward groups](zero-rewards.svg)', '![Respondent variance share](variance-share.svg)', '![Validation curves](validation.svg)'];
  const seedLinks = ctx.seeds.map((seed) => `- seed ${seed}: [seed-${seed}/report.md](seed-${seed}/report.md) (final tables, paired differences, traces)`);
  const reportPath = join(reportDir, 'report.md');
  const title = `# ReMaRk vs Rank-GRPO: the recommendation study (${ctx.scale} scale, seeds ${ctx.seeds.join(', ')})`;
  await writeFile(reportPath, `${[title, markdown, ...links, '## Per-seed reports', ...seedLinks].join('\n\n')}\n`);
  return { summary, markdown, reportPath };
}
