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
import type { MoviesData } from '../trainer/task-recommend.js';
import { moviesData } from '../trainer/tasks.js';
import { mechanismDiagnostics, type MechanismDiagnostics } from './recommend-diagnostics.js';
import { studyFigures } from './recommend-figures.js';
import { recommendMarkdown } from './recommend-markdown.js';
// TEMPORARY: d-sft's lib/studies/recommend-policy.ts replaces this import at merge (same export and result fields).
import { trainRecommendPolicy } from './recommend-policy.js';
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

type ConfigFor = (layer: ConfigInput, seed: number) => TrainerConfig;

/** The diagnostics of the SFT policy (saved with their rollouts in diagnostics.json). */
async function diagnose(ctx: StudyContext, policyDir: string, base: TrainerConfig, data: MoviesData): Promise<MechanismDiagnostics> {
  const s = RECOMMEND_SETTINGS[ctx.scale];
  const phase = ctx.reporter.phase(`diagnostics: ${s.diagnosticRequests} validation requests × ${s.diagnosticLists} sampled lists of the SFT policy`, 1, 'passes');
  const policy = await loadPolicy(policyDir, base.device);
  const d = await mechanismDiagnostics(policy, base, data, s.diagnosticRequests, s.diagnosticLists);
  policy.dispose();
  await writeJsonAtomic(join(ctx.out, 'diagnostics.json'), d);
  const groups = d.zeroRewardGroups;
  phase.done(`valid items ${d.validItemFraction.toFixed(3)}; zero-reward groups ${groups.respondent.toFixed(3)} (respondent) vs ${groups.union.toFixed(3)} (union)`);
  return d;
}

/** Every arm of one seed from the SFT checkpoint; returns arm → run directory. */
async function trainSeed(ctx: StudyContext, seed: number, layers: Record<string, ConfigInput>, configFor: ConfigFor, policyDir: string) {
  const dirs: Record<string, string> = {};
  for (const [arm, layer] of Object.entries(layers)) {
    const config = configFor(layer, seed);
    dirs[arm] = join(ctx.out, 'runs', `seed-${seed}`, arm);
    await trainWithProgress(ctx.reporter, `${arm} seed ${seed} (${config.steps} steps)`, { config, policy: await loadPolicy(policyDir, config.device), runDir: dirs[arm] });
  }
  await compareRuns(Object.values(dirs), join(ctx.out, 'report', `seed-${seed}`), {
    title: `ReMaRk vs Rank-GRPO, seed ${seed} (test split, greedy lists, K = ${configFor({}, seed).rewards.ranks})`, names: Object.keys(dirs),
  });
  return dirs;
}

/** report.md (title, the study's tables, the figures, links to the per-seed reports) and its figures. */
async function writeStudyReport(ctx: StudyContext, markdown: string, diagnostics: MechanismDiagnostics, curves: BandPoint[], metric: string): Promise<string> {
  const reportDir = join(ctx.out, 'report');
  const figures = await studyFigures(diagnostics, curves, metric);
  await Promise.all(Object.entries(figures).map(([file, svg]) => writeFile(join(reportDir, file), svg)));
  const links = ['![Zero-reward groups](zero-rewards.svg)', '![Respondent variance share](variance-share.svg)', '![Validation curves](validation.svg)'];
  const seedLinks = ctx.seeds.map((seed) => `- seed ${seed}: [seed-${seed}/report.md](seed-${seed}/report.md) (final tables, paired differences, traces)`);
  const title = `# ReMaRk vs Rank-GRPO: the recommendation study (${ctx.scale} scale, seeds ${ctx.seeds.join(', ')})`;
  const reportPath = join(reportDir, 'report.md');
  await writeFile(reportPath, `${[title, markdown, ...links, '## Per-seed reports', ...seedLinks].join('\n\n')}\n`);
  return reportPath;
}

export async function runRecommendStudy(ctx: StudyContext): Promise<StudyResult<RecommendSummary>> {
  const s = RECOMMEND_SETTINGS[ctx.scale];
  const policy = await trainRecommendPolicy(ctx);
  // the policy's task options (its benchmark folder, K and generation) come after the study's sizes: the arms sample as the SFT taught
  const configFor: ConfigFor = (layer, seed) => resolveConfig(s.arms, policy.taskOptions, layer, ctx.overrides, { seed, device: ctx.device });
  const base = configFor({ recipe: 'rank-grpo' }, ctx.seeds[0]);
  const data = moviesData(base.data.moviesDir);
  const diagnostics = await diagnose(ctx, policy.policyDir, base, data);
  const baselines = baselineArms(s.baselineScalings);
  const layers: Record<string, ConfigInput> = { ...baselines, ...Object.fromEntries(RECOMMEND_ARMS.map((r) => [r, { recipe: r }])) };
  const perSeed = [];
  const curves: BandPoint[] = [];
  for (const seed of ctx.seeds) {
    const dirs = await trainSeed(ctx, seed, layers, configFor, policy.policyDir);
    perSeed.push(await seedResult(seed, dirs, Object.keys(baselines), base, data));
    curves.push(...(await validationCurves(dirs, seed, base.validation.metric)));
  }
  const { rollouts: _saved, requests, lists, ...measured } = diagnostics; // the rollouts stay in diagnostics.json
  const summary: RecommendSummary = {
    K: base.rewards.ranks, steps: base.steps, seeds: [...ctx.seeds], arms: Object.keys(layers),
    ...measured, diagnostics: { requests, lists }, sftChecks: policy.checks,
    prerequisites: { validItems: diagnostics.validItemFraction >= 0.5, zeroRewardGroups: diagnostics.zeroRewardGroups.respondent < 0.9 },
    perSeed: perSeed.map((p) => p.result),
    pooled: pooledResults(perSeed, ctx.seeds[0]),
  };
  const markdown = recommendMarkdown(summary, base);
  return { summary, markdown, reportPath: await writeStudyReport(ctx, markdown, diagnostics, curves, base.validation.metric) };
}
