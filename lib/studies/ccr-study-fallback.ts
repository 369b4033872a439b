// TEMPORARY stand-in for lib/studies/ccr-study.ts (helper d-ccr, issue 18) so the commands run until it is merged:
// today's arithmetic SFT, then grpo at a long window, grpo at the short window (CCR's cap / N) and ccr, with the
// summary fields the schema requires. At merge: point the import in lib/cli/studies.ts at './ccr-study.js' and
// delete this file.
import { join } from 'node:path';
import { demoPolicy, demoTokenizer, loadPolicy } from '../cli/models.js';
import { DEMO_SETTINGS } from '../cli/demo-settings.js';
import { sftWithProgress, trainWithProgress } from '../cli/run-training.js';
import { formatNumber, markdownTable } from '../eval/report-markdown.js';
import type { StepRecord } from '../trainer/loop.js';
import { resolveConfig } from '../trainer/recipes.js';
import { compareRuns } from '../trainer/run-report.js';
import { readJsonlRows, RunDir } from '../trainer/run-dir.js';
import { arithmeticExamples } from '../trainer/sft.js';
import type { CcrArms, CcrSummaryFields } from './summary.js';
import type { StudyContext, StudyResult } from './study.js';

const ARMS = { grpoLong: { recipe: 'grpo', cap: 96 }, grpoShort: { recipe: 'grpo', cap: 32 }, ccr: { recipe: 'ccr', cap: 96 } } as const;

async function meanOverSteps(dir: string, value: (r: StepRecord) => number): Promise<number> {
  const rows = await readJsonlRows<StepRecord>(new RunDir(dir).file('metrics'));
  return rows.reduce((sum, r) => sum + value(r), 0) / rows.length;
}

export async function runCcrStudy(ctx: StudyContext): Promise<StudyResult<CcrSummaryFields>> {
  const s = DEMO_SETTINGS[ctx.scale === 'quick' ? 'quick' : 'full'];
  const data = resolveConfig(s.ccr, { recipe: 'ccr' }).data;
  const policy = await demoPolicy(s.model, demoTokenizer(s.vocabSize, data, 5), 0, ctx.device);
  const examples = arithmeticExamples(data, [1, 3]);
  await sftWithProgress(ctx.reporter, `SFT arithmetic (${examples.length} examples)`, policy, examples, s.sft, join(ctx.out, 'sft'));
  policy.dispose();
  const dirs = Object.fromEntries(Object.keys(ARMS).map((arm) => [arm, join(ctx.out, 'runs', `seed-${ctx.seeds[0]}`, arm)])) as Record<keyof CcrArms, string>;
  for (const [arm, { recipe, cap }] of Object.entries(ARMS) as [keyof CcrArms, (typeof ARMS)[keyof CcrArms]][]) {
    const config = resolveConfig(s.ccr, { recipe }, { generation: { maxNewTokens: cap } }, ctx.overrides, { seed: ctx.seeds[0], device: ctx.device });
    await trainWithProgress(ctx.reporter, `${arm} (${config.steps} steps)`, { config, policy: await loadPolicy(join(ctx.out, 'sft', 'policy'), config.device), runDir: dirs[arm] });
  }
  const perArm = async (value: (r: StepRecord) => number) => Object.fromEntries(await Promise.all(
    Object.entries(dirs).map(async ([arm, dir]) => [arm, await meanOverSteps(dir, value)]))) as unknown as CcrArms;
  const summary: CcrSummaryFields = {
    tokensPerStep: await perArm((r) => r.tokens.prompt + r.tokens.completion),
    informativeGroups: await perArm((r) => r.stats.informativeGroups),
  };
  const reportDir = join(ctx.out, 'report');
  await compareRuns(Object.values(dirs), reportDir, { title: 'CCR vs single-problem GRPO (temporary study)', names: Object.keys(dirs) });
  const rows = (Object.keys(ARMS) as (keyof CcrArms)[]).map((arm) => [arm, formatNumber(summary.tokensPerStep[arm], 1), formatNumber(summary.informativeGroups[arm])]);
  const markdown = ['### CCR vs single-problem GRPO on the bundled arithmetic task', '',
    markdownTable(['arm', 'tokens per step (mean)', 'informative-group fraction (mean)'], rows), ''].join('\n');
  return { summary, markdown, reportPath: join(reportDir, 'report.md') };
}
