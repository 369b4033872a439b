// The CCR study's part of summary.json: per-step measurements of each arm averaged over steps and seeds,
// the headline token reduction, the SFT length check and the single-problem test comparison with intervals.
import { bootstrap, pairedBootstrap, ratioOf, type Interval, type RequestSeries } from '../eval/bootstrap.js';
import { formatInterval, formatNumber, markdownTable } from '../eval/report-markdown.js';
import type { StepRecord } from '../trainer/loop.js';

/** The three arms, in report order. */
export const CCR_ARMS = ['grpoLong', 'grpoShort', 'ccr'] as const;
export type CcrArm = (typeof CCR_ARMS)[number];
export type PerArm<T> = Record<CcrArm, T>;

/** Per-step series of one run, from its metrics.jsonl rows. */
export interface ArmSteps {
  /** prompt + completion tokens per step */
  tokens: number[];
  completionTokens: number[];
  /** groups whose candidates' correct counts differ */
  informative: number[];
  /** 1 − Σ p_c^S from per-prompt correct rates (lib/eval/diagnostics.ts predictedInformative) */
  predicted: number[];
  /** the same from the step's pooled count distribution (ccrSignal) */
  predictedPooled: number[];
  /** accuracy reward: correct answers / N per completion, mean over completions */
  accuracy: number[];
  /** completion tokens / N per completion, mean */
  lengthPerProblem: number[];
  truncation: number[];
  /** share of the completions' problem sections written in the concise style (lib/data/stepwise.ts workingStyles) */
  conciseShare: number[];
}

export function armSteps(rows: readonly StepRecord[], problems: number): ArmSteps {
  const of = (f: (r: StepRecord) => number) => rows.map(f);
  return {
    tokens: of((r) => r.tokens.prompt + r.tokens.completion),
    completionTokens: of((r) => r.tokens.completion),
    informative: of((r) => r.stats.informativeGroups),
    predicted: of((r) => r.stats.informativePredictedPerPrompt),
    predictedPooled: of((r) => r.stats.informativePredicted),
    accuracy: of((r) => r.stats.accuracy),
    lengthPerProblem: of((r) => r.completionLength.mean / problems),
    truncation: of((r) => r.truncationRate),
    conciseShare: of((r) => r.stats.conciseShare),
  };
}

/** The SFT policy's single-problem completion length (tokens), sampled at the RL temperature. */
export interface SftLength {
  samples: number;
  temperature: number;
  /** cap of the probe (longer than grpo-long's, so lengths are not cut at that window) */
  window: number;
  mean: number;
  p90: number;
  p99: number;
  max: number;
  /** samples that hit the probe's cap */
  truncated: number;
  /** p99 < grpo-long's cap: no SFT completion should truncate at the long window */
  longWindowFits: boolean;
  /** share of the samples written in the concise style (the SFT data's share is `sftConciseShare`) */
  conciseShare: number;
  /** accuracy of the samples written in each style: whether the short form keeps the answers right */
  accuracyByStyle: { verbose: number; concise: number };
}

type Estimate = Pick<Interval, 'estimate' | 'low' | 'high'>;

export interface CcrSummary {
  scale: string;
  seeds: number[];
  /** problems per ccr prompt */
  n: number;
  caps: { grpoLong: number; grpoShort: number; ccr: number; evaluation: number };
  steps: number;
  groups: number;
  candidates: number;
  sftLength: SftLength;
  /** share of the SFT solutions written concise (the rest verbose) */
  sftConciseShare: number;
  /** means over steps (and seeds) */
  tokensPerStep: PerArm<number>;
  completionTokensPerStep: PerArm<number>;
  /** ccr / grpoLong − 1 of the two token means, beside the paper's */
  tokenReduction: { tokensPerStep: number; completionTokensPerStep: number; paper: { tokensPerStep: number; completionTokensPerStep: number } };
  informativeGroups: PerArm<number>;
  informativePredicted: PerArm<number>;
  informativePredictedPooled: PerArm<number>;
  accuracyReward: PerArm<number>;
  completionLengthPerProblem: PerArm<number>;
  truncationRate: PerArm<number>;
  /** problem sections written concise: over all steps, and over the last quarter of the steps */
  conciseShare: PerArm<number>;
  conciseShareFinal: PerArm<number>;
  /** single-problem greedy test accuracy of each arm's final policy, seeds pooled per problem, 95% bootstrap over problems */
  testAccuracy: PerArm<Estimate>;
  /** paired differences in points (the same test problems resampled for both) */
  testDifferences: { ccrMinusGrpoLong: Estimate; ccrMinusGrpoShort: Estimate; grpoShortMinusGrpoLong: Estimate };
  perSeed: Array<{ seed: number; tokensPerStep: PerArm<number>; informativeGroups: PerArm<number>; testAccuracy: PerArm<number> }>;
}

/** The paper's tokens-per-step change of CCR against long-window GRPO (prompt + completion, completion only). */
export const PAPER_REDUCTION = Object.freeze({ tokensPerStep: -0.821, completionTokensPerStep: -0.791 });

const mean = (values: readonly number[]) => values.reduce((s, v) => s + v, 0) / values.length;
const estimate = ({ estimate: e, low, high }: Interval): Estimate => ({ estimate: e, low, high });

/**
 * Per-arm means over every step of every seed of one field of the step series (or over each run's last quarter of
 * steps). The concise share is undefined (NaN) at a step whose completions hold no problem section: such steps are left out.
 */
function perArm(runs: ReadonlyArray<PerArm<ArmSteps>>, field: keyof ArmSteps, lastQuarter = false): PerArm<number> {
  const steps = (values: number[]) => (lastQuarter ? values.slice(-Math.max(1, Math.floor(values.length / 4))) : values);
  const defined = (values: number[]) => (field === 'conciseShare' ? values.filter(Number.isFinite) : values);
  return Object.fromEntries(CCR_ARMS.map((arm) => [arm, mean(runs.flatMap((r) => defined(steps(r[arm][field]))))])) as PerArm<number>;
}

/** Seeds pooled per test problem: sum and count added over seeds. */
function pooled(series: readonly RequestSeries[]): RequestSeries {
  const sum = new Float64Array(series[0].sum.length);
  const count = new Float64Array(series[0].sum.length);
  for (const s of series) s.sum.forEach((v, i) => ((sum[i] += v), (count[i] += s.count[i])));
  return { sum, count };
}

export interface StudyRuns {
  seeds: number[];
  /** per seed: each arm's step series */
  steps: Array<PerArm<ArmSteps>>;
  /** per seed: each arm's test accuracy series over the test problems */
  test: Array<PerArm<RequestSeries>>;
}

export function ccrSummary(
  runs: StudyRuns, head: Pick<CcrSummary, 'scale' | 'n' | 'caps' | 'steps' | 'groups' | 'candidates' | 'sftLength' | 'sftConciseShare'>,
): CcrSummary {
  const tokensPerStep = perArm(runs.steps, 'tokens');
  const completionTokensPerStep = perArm(runs.steps, 'completionTokens');
  const test = Object.fromEntries(CCR_ARMS.map((arm) => [arm, pooled(runs.test.map((t) => t[arm]))])) as PerArm<RequestSeries>;
  const intervals = bootstrap(CCR_ARMS.map((arm) => test[arm]));
  const paired = (a: CcrArm, b: CcrArm) => estimate(pairedBootstrap(test[a], test[b]));
  return {
    ...head,
    seeds: runs.seeds,
    tokensPerStep,
    completionTokensPerStep,
    tokenReduction: {
      tokensPerStep: tokensPerStep.ccr / tokensPerStep.grpoLong - 1,
      completionTokensPerStep: completionTokensPerStep.ccr / completionTokensPerStep.grpoLong - 1,
      paper: { ...PAPER_REDUCTION },
    },
    informativeGroups: perArm(runs.steps, 'informative'),
    informativePredicted: perArm(runs.steps, 'predicted'),
    informativePredictedPooled: perArm(runs.steps, 'predictedPooled'),
    accuracyReward: perArm(runs.steps, 'accuracy'),
    completionLengthPerProblem: perArm(runs.steps, 'lengthPerProblem'),
    truncationRate: perArm(runs.steps, 'truncation'),
    conciseShare: perArm(runs.steps, 'conciseShare'),
    conciseShareFinal: perArm(runs.steps, 'conciseShare', true),
    testAccuracy: Object.fromEntries(CCR_ARMS.map((arm, i) => [arm, estimate(intervals[i])])) as PerArm<Estimate>,
    testDifferences: {
      ccrMinusGrpoLong: paired('ccr', 'grpoLong'), ccrMinusGrpoShort: paired('ccr', 'grpoShort'), grpoShortMinusGrpoLong: paired('grpoShort', 'grpoLong'),
    },
    perSeed: runs.seeds.map((seed, i) => ({
      seed,
      tokensPerStep: perArm([runs.steps[i]], 'tokens'),
      informativeGroups: perArm([runs.steps[i]], 'informative'),
      testAccuracy: Object.fromEntries(CCR_ARMS.map((arm) => [arm, ratioOf(runs.test[i][arm])])) as PerArm<number>,
    })),
  };
}

const percent = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;
const interval = (e: Estimate, digits: number, signed = false) => formatInterval({ ...e, level: 0.95, resamples: 2000 }, digits, signed);

/** The markdown section of summary.md. */
export function ccrMarkdown(s: CcrSummary): string {
  const label: PerArm<string> = { grpoLong: `grpo, long window (${s.caps.grpoLong})`, grpoShort: `grpo, short window (${s.caps.grpoShort})`, ccr: `ccr N=${s.n} (${s.caps.ccr} shared)` };
  const row = (name: string, values: PerArm<number>, digits = 3) => [name, ...CCR_ARMS.map((a) => formatNumber(values[a], digits))];
  const l = s.sftLength;
  const d = s.testDifferences;
  return [
    `### CCR vs single-problem GRPO on the stepwise arithmetic task (${s.seeds.length} seed${s.seeds.length > 1 ? 's' : ''}, ${s.steps} steps of ${s.groups} × ${s.candidates})`,
    '',
    `SFT policy, single problems sampled at temperature ${l.temperature} (${l.samples} samples, window ${l.window}): completion length mean ${formatNumber(l.mean, 1)}, ` +
      `p90 ${formatNumber(l.p90, 0)}, p99 ${formatNumber(l.p99, 0)} tokens (${l.truncated} hit the window); p99 ${l.longWindowFits ? '<' : '≥'} the long window ${s.caps.grpoLong}; ` +
      `${formatNumber(l.conciseShare, 3)} of them concise (SFT data: ${formatNumber(s.sftConciseShare, 2)}); ` +
      `accuracy of the verbose ones ${formatNumber(l.accuracyByStyle.verbose, 3)}, of the concise ones ${formatNumber(l.accuracyByStyle.concise, 3)}.`,
    '',
    `**Tokens per step, ccr against grpo at the long window: ${percent(s.tokenReduction.tokensPerStep)} (prompt + completion), ` +
      `${percent(s.tokenReduction.completionTokensPerStep)} (completion only)**; the paper: ${percent(PAPER_REDUCTION.tokensPerStep)} / ${percent(PAPER_REDUCTION.completionTokensPerStep)}.`,
    '',
    markdownTable(['means over steps', ...CCR_ARMS.map((a) => label[a])], [
      row('tokens per step (prompt + completion)', s.tokensPerStep, 0),
      row('completion tokens per step', s.completionTokensPerStep, 0),
      row('informative-group fraction', s.informativeGroups),
      row('predicted 1 − Σ p_c^S (per-prompt rates)', s.informativePredicted),
      row('predicted (pooled count distribution)', s.informativePredictedPooled),
      row('accuracy reward (correct / N)', s.accuracyReward),
      row('completion length per problem (tokens)', s.completionLengthPerProblem, 1),
      row('truncation rate', s.truncationRate),
      row('problems answered concise', s.conciseShare),
      row('problems answered concise, last quarter of the steps', s.conciseShareFinal),
      ['test accuracy, single problems (window ' + s.caps.evaluation + ')', ...CCR_ARMS.map((a) => interval(s.testAccuracy[a], 3))],
    ]),
    '',
    `Paired test differences (points, 95% paired bootstrap over test problems): ccr − grpo-long ${interval(d.ccrMinusGrpoLong, 1, true)}, ` +
      `ccr − grpo-short ${interval(d.ccrMinusGrpoShort, 1, true)}, grpo-short − grpo-long ${interval(d.grpoShortMinusGrpoLong, 1, true)}.`,
  ].join('\n');
}
