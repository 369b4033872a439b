// The CCR study (issue 18): from one SFT checkpoint on the stepwise arithmetic task, grpo at a long window,
// grpo at a short window (ccr's window / N) and ccr (N = 3) at the short shared window, same seeds, groups
// and candidates; tokens per step, informative groups against their prediction, lengths, truncation, and
// single-problem test accuracy at a generous window with bootstrap intervals and paired differences.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mixSeed } from '../data/rng.js';
import { generateStepwise, workingStyles, type StepwiseOptions, type StepwiseStyle } from '../data/stepwise.js';
import { GrpoError } from '../errors.js';
import { quantileSorted, type RequestSeries } from '../eval/bootstrap.js';
import { predictedInformative } from '../eval/diagnostics.js';
import { renderSvg, traceSpec } from '../eval/report-svg.js';
import { trainBpe } from '../cli/bpe.js';
import { demoPolicy, loadPolicy } from '../cli/models.js';
import { sftWithProgress, trainWithProgress } from '../cli/run-training.js';
import type { Policy } from '../policy/policy.js';
import type { Tokenizer } from '../policy/tokenizer.js';
import { ccrReferenceCompletion, ccrReward, packProblems, type CcrTemplate } from '../rewards/ccr.js';
import type { ConfigInput, TrainerConfig } from '../trainer/config.js';
import type { StepRecord } from '../trainer/loop.js';
import { resolveConfig } from '../trainer/recipes.js';
import { encodePrompt } from '../trainer/rollout.js';
import { readJson, readJsonlRows, RunDir } from '../trainer/run-dir.js';
import { compareRuns, type TestFile } from '../trainer/run-report.js';
import type { SftExample } from '../trainer/sft.js';
import { ccrTask, type ArithmeticData } from '../trainer/task-ccr.js';
import type { Task } from '../trainer/task.js';
import { CCR_STUDY_N, CCR_STUDY_SETTINGS, type CcrStudySettings } from './ccr-settings.js';
import { armSteps, ccrMarkdown, ccrSummary, CCR_ARMS, type ArmSteps, type CcrArm, type CcrSummary, type PerArm, type SftLength } from './ccr-summary.js';
import type { StudyContext, StudyResult } from './study.js';

export type { CcrSummary } from './ccr-summary.js';

/**
 * The study's prompt: the problems, then one instruction line. Shorter than the default template, so that,
 * as in the paper's setting, the working and not the prompt is most of a sequence.
 */
export const STUDY_TEMPLATE: CcrTemplate = (questions) =>
  [...questions.map((q, i) => `Problem ${i + 1}: ${q.trim()}`), 'Work step by step; end each with Answer k: \\boxed{}.'].join('\n');

/** The generator's options of the study's problems (everything but the split sizes). */
function stepwiseOptions(s: CcrStudySettings): Omit<StepwiseOptions, 'count' | 'seed'> {
  const { train, validation, test, packed, ...options } = s.problems;
  return options;
}

/** Train, validation and test splits of the stepwise task (seeds fixed by split, shared by every arm and seed). */
export function stepwiseData(s: CcrStudySettings): ArithmeticData {
  const make = (split: number, count: number) => generateStepwise({ count, seed: mixSeed(18, split) >>> 0, ...stepwiseOptions(s) });
  return { train: make(0, s.problems.train), validation: make(1, s.problems.validation), test: make(2, s.problems.test) };
}

/**
 * SFT pairs: every train problem alone, and the first `packedProblems` train problems packed N per prompt (each
 * problem's working in its style, then the answers). Packed targets are the longest (cut at the context), so their
 * number sets most of the SFT's cost.
 */
export function stepwiseExamples(data: ArithmeticData, packedProblems = data.train.length): SftExample[] {
  const single = data.train.map((p) => ({ prompt: packProblems([p], { n: 1, template: STUDY_TEMPLATE }), target: ccrReferenceCompletion([p]) }));
  const packed: SftExample[] = [];
  for (let i = 0; i + CCR_STUDY_N <= Math.min(packedProblems, data.train.length); i += CCR_STUDY_N) {
    const group = data.train.slice(i, i + CCR_STUDY_N);
    packed.push({ prompt: packProblems(group, { n: CCR_STUDY_N, template: STUDY_TEMPLATE }), target: ccrReferenceCompletion(group) });
  }
  return [...single, ...packed];
}

/** The CCR task under the study's template, logging also the per-prompt prediction of informative groups. */
function studyTask(config: TrainerConfig, data: ArithmeticData, tokenizer: Tokenizer): Task {
  const n = config.rewards.problems;
  const S = config.candidates;
  const task = ccrTask(config, data, tokenizer, STUDY_TEMPLATE);
  const logged: typeof task = {
    ...task,
    async rewards(prompts, rollout) {
      const out = await task.rewards(prompts, rollout);
      const correct = new Uint8Array(rollout.texts.length * n); // [groups, S, N]
      rollout.texts.forEach((text, b) => ccrReward(text, prompts.truths[Math.floor(b / S)]).correct.forEach((ok, k) => (correct[b * n + k] = ok ? 1 : 0)));
      const predicted = predictedInformative(correct, prompts.truths.length, S, n);
      return { ...out, stats: { ...out.stats, informativePredictedPerPrompt: predicted, conciseShare: conciseShare(rollout.texts) } };
    },
  };
  return logged as Task;
}

/** Share of the completions' problem sections written in the concise style (NaN when none has working). */
function conciseShare(texts: readonly string[]): number {
  const styles = texts.flatMap(workingStyles);
  return styles.filter((style) => style === 'concise').length / styles.length;
}

/** Single problems of the validation split, sampled once each at the RL temperature with a window beyond the long cap. */
async function sftLength(policy: Policy, data: ArithmeticData, s: CcrStudySettings, temperature: number): Promise<SftLength> {
  const tokenizer = policy.tokenizer!;
  const problems = data.validation.slice(0, s.lengthProbe);
  const window = Math.min(s.caps.long + 64, policy.config.maxPositions - 96);
  const prompts = problems.map((p) => encodePrompt(tokenizer, packProblems([p], { n: 1, template: STUDY_TEMPLATE })));
  const out = await policy.generate(prompts, { maxNewTokens: window, temperature, seed: 18 });
  const texts = out.map((g) => g.text ?? tokenizer.decode(g.tokens, { skipSpecialTokens: true }));
  const lengths = out.map((g) => g.tokens.length).sort((a, b) => a - b);
  const p99 = quantileSorted(lengths, 0.99);
  return {
    samples: lengths.length, temperature, window,
    mean: lengths.reduce((sum, v) => sum + v, 0) / lengths.length,
    p90: quantileSorted(lengths, 0.9), p99, max: lengths[lengths.length - 1],
    truncated: out.filter((g) => g.truncated).length,
    conciseShare: conciseShare(texts),
    accuracyByStyle: accuracyByStyle(texts, problems.map((p) => p.answer)),
    longWindowFits: p99 < s.caps.long,
  };
}

/** Accuracy of the single-problem samples written in each style (NaN for a style no sample used). */
function accuracyByStyle(texts: readonly string[], answers: readonly string[]): Record<StepwiseStyle, number> {
  const tally = { verbose: { correct: 0, count: 0 }, concise: { correct: 0, count: 0 } };
  texts.forEach((text, i) => {
    const style = workingStyles(text)[0];
    if (!style) return;
    tally[style].count += 1;
    tally[style].correct += ccrReward(text, [answers[i]]).accuracy;
  });
  return { verbose: tally.verbose.correct / tally.verbose.count, concise: tally.concise.correct / tally.concise.count };
}

const ARM_RECIPE: PerArm<{ recipe: 'grpo' | 'ccr'; cap: keyof CcrStudySettings['caps'] }> = {
  grpoLong: { recipe: 'grpo', cap: 'long' }, grpoShort: { recipe: 'grpo', cap: 'short' }, ccr: { recipe: 'ccr', cap: 'ccr' },
};

function armConfig(s: CcrStudySettings, ctx: StudyContext, arm: CcrArm, seed: number): TrainerConfig {
  const { recipe, cap } = ARM_RECIPE[arm];
  const layer: ConfigInput = {
    seed, evalMaxNewTokens: s.evalWindow,
    generation: { maxNewTokens: s.caps[cap] } as ConfigInput['generation'],
    rewards: { problems: recipe === 'ccr' ? CCR_STUDY_N : 1 } as ConfigInput['rewards'],
  };
  const { recipe: ignored, ...overrides } = ctx.overrides; // each arm's recipe is the study's
  return resolveConfig(s.rl, { recipe }, layer, overrides, { device: ctx.device });
}

interface ArmRun {
  steps: ArmSteps;
  test: RequestSeries;
  dir: string;
}

async function runArm(ctx: StudyContext, s: CcrStudySettings, data: ArithmeticData, sftDir: string, arm: CcrArm, seed: number): Promise<ArmRun> {
  const config = armConfig(s, ctx, arm, seed);
  const policy = await loadPolicy(sftDir, config.device);
  const dir = join(ctx.out, 'runs', `seed-${seed}`, arm);
  try {
    await trainWithProgress(ctx.reporter, `${arm} seed ${seed} (${config.steps} steps, cap ${config.generation.maxNewTokens})`,
      { config, policy, runDir: dir, task: studyTask(config, data, policy.tokenizer!) });
  } finally {
    policy.dispose();
  }
  const rows = await readJsonlRows<StepRecord>(new RunDir(dir).file('metrics'));
  const test = await readJson<TestFile>(new RunDir(dir).file('test'));
  const accuracy = test.series.accuracy;
  return { steps: armSteps(rows, config.rewards.problems), test: { sum: Float64Array.from(accuracy.sum), count: Float64Array.from(accuracy.count) }, dir };
}

/** The study's own figures: tokens per step, informative groups against their prediction, length per problem. */
async function figures(out: string, runs: PerArm<ArmRun>, window: number): Promise<string[]> {
  const trace = (field: keyof ArmSteps) => CCR_ARMS.map((arm) => ({ run: arm, values: runs[arm].steps[field] }));
  const informative = CCR_ARMS.flatMap((arm) => [
    { run: `${arm} observed`, values: runs[arm].steps.informative },
    { run: `${arm} predicted`, values: runs[arm].steps.predicted },
  ]);
  const specs: Array<[string, string, ReturnType<typeof traceSpec>]> = [
    ['study-tokens-per-step.svg', 'Tokens per step (prompt + completion)', traceSpec('Tokens per step (prompt + completion)', 'tokens', trace('tokens'), window)],
    ['study-completion-tokens-per-step.svg', 'Completion tokens per step', traceSpec('Completion tokens per step', 'tokens', trace('completionTokens'), window)],
    ['study-informative-groups.svg', 'Informative groups: observed and predicted 1 − Σ p_c^S', traceSpec('Informative groups: observed and predicted', 'fraction of groups', informative, window)],
    ['study-length-per-problem.svg', 'Completion length per problem', traceSpec('Completion length per problem (tokens)', 'tokens', trace('lengthPerProblem'), window)],
    ['study-accuracy-reward.svg', 'Accuracy reward (correct / N)', traceSpec('Accuracy reward (correct / N)', 'reward', trace('accuracy'), window)],
    ['study-truncation.svg', 'Truncation rate', traceSpec('Truncation rate', 'fraction of completions', trace('truncation'), window)],
    ['study-concise-share.svg', 'Problems answered in the concise style', traceSpec('Problems answered in the concise style', 'fraction of problem sections', trace('conciseShare'), window)],
  ];
  await Promise.all(specs.map(async ([file, , spec]) => writeFile(join(out, file), await renderSvg(spec))));
  return specs.map(([file, title]) => `![${title}](${file})`);
}

/** compareRuns' report of the first seed's arms, under the study's summary and figures. */
async function writeStudyReport(ctx: StudyContext, summary: CcrSummary, markdown: string, runs: PerArm<ArmRun>): Promise<string> {
  const out = join(ctx.out, 'report');
  await rm(out, { recursive: true, force: true });
  const notes = `Runs of seed ${summary.seeds[0]}; every arm from the same SFT checkpoint, tested at its final step (no validation selection).`;
  await compareRuns(CCR_ARMS.map((arm) => runs[arm].dir), out, { title: 'CCR vs single-problem GRPO: the runs', names: [...CCR_ARMS], notes });
  const window = Math.max(1, Math.floor(summary.steps / 4));
  const links = await figures(out, runs, window);
  const compared = await readFile(join(out, 'report.md'), 'utf8');
  const head = ['# CCR vs single-problem GRPO (stepwise arithmetic)', '', markdown, '', `Figures (seed ${summary.seeds[0]}; bold: trailing mean over ${window} steps):`, '', ...links].join('\n');
  const reportPath = join(out, 'report.md');
  await writeFile(reportPath, `${head}\n\n${compared.replace(/^# /, '## ').replace(/\n# /g, '\n## ')}`);
  return reportPath;
}

/** Runs the CCR study at `ctx.scale` into `ctx.out` (sft/, runs/, report/). */
export async function runCcrStudy(ctx: StudyContext): Promise<StudyResult<CcrSummary>> {
  const s = CCR_STUDY_SETTINGS[ctx.scale];
  if (!s) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Unknown study scale "${ctx.scale}"; expected quick, demo or full`);
  if (ctx.seeds.length === 0) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'The CCR study needs at least one seed');
  if (s.caps.short * CCR_STUDY_N > s.caps.ccr) throw new GrpoError('GRPO_INVALID_ARGUMENT', `The short window (${s.caps.short}) must be at most ccr's window / N (${s.caps.ccr} / ${CCR_STUDY_N})`);
  for (const part of ['sft', 'runs', 'report']) await rm(join(ctx.out, part), { recursive: true, force: true });
  const data = stepwiseData(s);
  const examples = stepwiseExamples(data, s.problems.packed);
  const bpe = ctx.reporter.phase('CCR study: tokenizer (byte-level BPE)', 1, 'tokenizers');
  const tokenizer = trainBpe(examples.flatMap((e) => [e.prompt, e.target]), s.vocabSize);
  bpe.done(`${tokenizer.vocabSize} tokens`);
  const policy = await demoPolicy(s.model, tokenizer, 0, ctx.device);
  const temperature = armConfig(s, ctx, 'ccr', ctx.seeds[0]).generation.temperature;
  let length: SftLength;
  try {
    await sftWithProgress(ctx.reporter, `CCR study: SFT (${examples.length} examples)`, policy, examples, s.sft, join(ctx.out, 'sft'));
    length = await sftLength(policy, data, s, temperature);
  } finally {
    policy.dispose();
  }
  ctx.reporter.note(`CCR study: SFT single-problem length mean ${length.mean.toFixed(1)}, p90 ${length.p90.toFixed(0)}, p99 ${length.p99.toFixed(0)} tokens (long window ${s.caps.long})`);
  const sftDir = join(ctx.out, 'sft', 'policy');
  const perSeed: Array<PerArm<ArmRun>> = [];
  for (const seed of ctx.seeds) {
    const runs = {} as PerArm<ArmRun>;
    for (const arm of CCR_ARMS) runs[arm] = await runArm(ctx, s, data, sftDir, arm, seed);
    perSeed.push(runs);
  }
  const base = armConfig(s, ctx, 'ccr', ctx.seeds[0]);
  const summary = ccrSummary(
    { seeds: [...ctx.seeds], steps: perSeed.map((r) => mapArms(r, (a) => a.steps)), test: perSeed.map((r) => mapArms(r, (a) => a.test)) },
    {
      scale: ctx.scale, n: CCR_STUDY_N, steps: base.steps, groups: base.groups, candidates: base.candidates, sftLength: length, sftConciseShare: s.problems.conciseShare,
      caps: { grpoLong: s.caps.long, grpoShort: s.caps.short, ccr: s.caps.ccr, evaluation: s.evalWindow },
    },
  );
  const markdown = ccrMarkdown(summary);
  const reportPath = await writeStudyReport(ctx, summary, markdown, perSeed[0]);
  return { summary, markdown, reportPath };
}

function mapArms<T, U>(runs: PerArm<T>, f: (run: T) => U): PerArm<U> {
  return Object.fromEntries(CCR_ARMS.map((arm) => [arm, f(runs[arm])])) as PerArm<U>;
}
