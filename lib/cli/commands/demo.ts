// `grpo demo` (= `npm start`): SFT of the built-in model on the bundled data, then remark vs rank-grpo
// and ccr vs grpo from that checkpoint with the same steps and seed, test evaluation with intervals,
// paired differences and steps-to-target; prints the summary table and writes reports with figures.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Device } from '../../binding/index.js';
import { getThreads } from '../../runtime.js';
import { TRAINER_DEFAULTS, type ConfigInput } from '../../trainer/config.js';
import type { ZeroRewardFractions } from '../../eval/diagnostics.js';
import type { StepRecord } from '../../trainer/loop.js';
import { readJsonlRows, RunDir } from '../../trainer/run-dir.js';
import { resolveConfig } from '../../trainer/recipes.js';
import { compareRuns } from '../../trainer/run-report.js';
import { arithmeticExamples, recommendExamples } from '../../trainer/sft.js';
import { moviesData } from '../../trainer/tasks.js';
import { DEVICE_FLAG, deviceFlag } from '../args.js';
import type { Command } from '../command.js';
import { DEMO_SETTINGS, type DemoSettings } from '../demo-settings.js';
import { pairTable, type Pair } from '../demo-summary.js';
import { demoPolicy, demoTokenizer, loadPolicy } from '../models.js';
import type { Reporter } from '../progress.js';
import { sftWithProgress, trainWithProgress } from '../run-training.js';

const RECOMMEND_METRICS = ['rowRecall', 'requestRecall', 'unionRecall', 'relevantRecall', 'relevantNdcg', 'hitLogPopularity'];
const CCR_METRICS = ['accuracy', 'completionTokens'];

const stat = (name: string) => (r: StepRecord) => r.stats[name];

/** Zero-reward fractions of a run's training batches, averaged over its steps. */
async function zeroRewardMeans(dir: string): Promise<ZeroRewardFractions> {
  const rows = await readJsonlRows<StepRecord>(new RunDir(dir).file('metrics'));
  const mean = (name: string) => rows.reduce((sum, r) => sum + r.stats[name], 0) / rows.length;
  return { cells: mean('zeroRewardCells'), requests: mean('zeroRewardGroups') };
}

async function trainPair(reporter: Reporter, out: string, sftDir: string, base: ConfigInput, recipes: readonly string[], extra: (recipe: string) => ConfigInput, overrides: ConfigInput) {
  for (const recipe of recipes) {
    const config = resolveConfig(base, { recipe: recipe as never }, extra(recipe), overrides);
    await trainWithProgress(reporter, `${recipe} (${config.steps} steps)`, { config, policy: await loadPolicy(sftDir, config.device), runDir: join(out, 'runs', recipe) });
  }
}

async function sftPhase(reporter: Reporter, s: DemoSettings, out: string, sftSteps: number | undefined, device: Device): Promise<string> {
  const ranks = resolveConfig(s.recommend).rewards.ranks;
  const data = resolveConfig(s.ccr, { recipe: 'ccr' }).data;
  const bpe = reporter.phase('tokenizer (byte-level BPE)', 1, 'tokenizers');
  const tokenizer = demoTokenizer(s.vocabSize, data, ranks);
  bpe.done(`${tokenizer.vocabSize} tokens`);
  const policy = await demoPolicy(s.model, tokenizer, 0, device);
  reporter.line(`Built-in model: ${policy.parameterCount().toLocaleString('en-US')} parameters on ${policy.device}, ${getThreads()} threads`);
  const examples = [...recommendExamples(moviesData(''), ranks), ...arithmeticExamples(data, [1, 3])];
  const options = { ...s.sft, steps: sftSteps ?? s.sft.steps };
  await sftWithProgress(reporter, `SFT (${examples.length} examples)`, policy, examples, options, join(out, 'sft'));
  policy.dispose();
  return join(out, 'sft', 'policy');
}

function pairs(out: string): Pair[] {
  const run = (name: string) => ({ name, dir: join(out, 'runs', name) });
  return [
    {
      title: 'ReMaRk vs Rank-GRPO on movies-multi (test split, greedy lists)',
      baseline: run('rank-grpo'), other: run('remark'), metrics: RECOMMEND_METRICS,
      trainingMeans: [
        { label: 'reward per list', value: stat('rewardMean') },
        { label: 'zero-reward (request, rank) cells', value: stat('zeroRewardCells') },
        { label: 'zero-reward groups (all S lists 0)', value: stat('zeroRewardGroups') },
        { label: 'completion tokens per list', value: (r) => r.completionLength.mean },
      ],
    },
    {
      title: 'CCR vs GRPO on the bundled arithmetic task (test: single problems, greedy)',
      baseline: run('grpo'), other: run('ccr'), metrics: CCR_METRICS,
      trainingMeans: [
        { label: 'tokens per step (prompt + completion)', value: (r) => r.tokens.prompt + r.tokens.completion },
        { label: 'completion tokens per step', value: (r) => r.tokens.completion },
        { label: 'problems per step', value: (r) => r.stats.problemsPerStep },
        { label: 'accuracy of sampled answers', value: stat('accuracy') },
        { label: 'completion length (tokens)', value: (r) => r.completionLength.mean },
        { label: 'informative-group fraction', value: stat('informativeGroups') },
        { label: 'truncation rate', value: (r) => r.truncationRate },
      ],
    },
  ];
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'the main job end to end: SFT, remark vs rank-grpo, ccr vs grpo, test evaluation and reports',
  usage: 'grpo demo [--out <dir>] [--quick] [--sft-steps <n>] [--device cpu|cuda|auto] [--<trainer option> <value> ...]',
  description: 'Trains the built-in model from scratch on the bundled data (SFT), then two RL pairs from that checkpoint with the same\n' +
    'steps and seed, evaluates the selected checkpoints on the test splits with bootstrap intervals, paired differences and\n' +
    'steps-to-target, prints a summary table and writes <out>/summary.md and the reports (markdown + SVG). Scaled down to\n' +
    'about 10 minutes on 2 cores (--quick: under 2 minutes); raise any trainer option by flag, e.g. --steps 500 --groups 48 --candidates 8.',
  flags: [
    { name: 'out', help: 'output folder; its previous demo output is replaced (default grpo-demo)' },
    { name: 'quick', help: 'test-sized settings, under 2 minutes', boolean: true },
    { name: 'sft-steps', help: 'SFT steps (default 800; quick 40)' },
    DEVICE_FLAG,
  ],
  acceptsConfig: true,
  async run(args, reporter) {
    const started = performance.now();
    const quick = args.flags.get('quick') === 'true';
    const s = DEMO_SETTINGS[quick ? 'quick' : 'full'];
    const out = args.flags.get('out') ?? 'grpo-demo';
    const sftSteps = args.flags.has('sft-steps') ? Number(args.flags.get('sft-steps')) : undefined;
    const device = deviceFlag(args) ?? TRAINER_DEFAULTS.device;
    for (const part of ['sft', 'runs', 'report', 'summary.md']) await rm(join(out, part), { recursive: true, force: true });
    const sftDir = await sftPhase(reporter, s, out, sftSteps, device);
    const overrides = { ...args.overrides, device } as ConfigInput;
    await trainPair(reporter, out, sftDir, s.recommend, ['rank-grpo', 'remark'], () => ({}), overrides);
    await trainPair(reporter, out, sftDir, s.ccr, ['grpo', 'ccr'], (r) => ({ generation: { maxNewTokens: s.caps[r as 'ccr' | 'grpo'] } as ConfigInput['generation'] }), overrides);
    const [rec, ccr] = pairs(out);
    const zeroRewards = {
      'respondent row (rank-grpo training)': await zeroRewardMeans(rec.baseline.dir),
      'union (remark training)': await zeroRewardMeans(rec.other.dir),
    };
    await compareRuns([rec.baseline.dir, rec.other.dir], join(out, 'report', 'recommend'), { title: rec.title, names: ['rank-grpo', 'remark'], diagnostics: { zeroRewards } });
    await compareRuns([ccr.baseline.dir, ccr.other.dir], join(out, 'report', 'ccr'), { title: ccr.title, names: ['grpo', 'ccr'] });
    const tables = await Promise.all(pairs(out).map(pairTable));
    const minutes = ((performance.now() - started) / 60000).toFixed(1);
    const summary = [`## grpo demo${quick ? ' --quick' : ''}: summary (${minutes} min, ${getThreads()} threads)`, '',
      'Estimates with 95% percentile bootstrap intervals over test prompts (2,000 resamples); differences are paired.', '', ...tables].join('\n');
    await writeFile(join(out, 'summary.md'), `${summary}\n`);
    reporter.line(`\n${summary}\n`);
    reporter.line(`Reports: ${join(out, 'report', 'recommend', 'report.md')}, ${join(out, 'report', 'ccr', 'report.md')}; runs in ${join(out, 'runs')}`);
  },
};
