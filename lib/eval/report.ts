/**
 * Reports: runs (validation curves, logged traces, final per-request metrics) and signal diagnostics
 * → a markdown summary with interval tables and SVG figures rendered in Node.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import { bootstrap, pairedBootstrap, BOOTSTRAP_OPTIONS, type BootstrapOptions, type Interval, type RequestSeries } from './bootstrap.js';
import { CURVE_DEFAULTS, stepsToTarget, summarizeSeries, type CurvePoint } from './curves.js';
import type { AnswersCompleted, CcrSignal, ZeroRewardFractions } from './diagnostics.js';
import { formatInterval, formatNumber, markdownTable, slug } from './report-markdown.js';
import { renderSvg, traceSpec, validationSpec, zeroRewardSpec } from './report-svg.js';

/** One validation point: the metric and, when known, its interval. */
export interface ValidationPoint extends CurvePoint {
  low?: number;
  high?: number;
}

/** One training run as the report sees it. */
export interface ReportRun {
  name: string;
  /** metric → validation curve (steps increasing) */
  validation?: Record<string, readonly ValidationPoint[]>;
  /** logged series, one value per training step, the first at step 1 (reward, completion length, zero-reward fraction, …) */
  traces?: Record<string, ArrayLike<number>>;
  /** final evaluation: metric → per-request series (one set of requests per run; the same in every run for paired differences) */
  final?: Record<string, RequestSeries>;
}

/** Diagnostics of the learning signal to include. */
export interface ReportDiagnostics {
  /** reward target label (e.g. "respondent row", "union") → zero-reward fractions */
  zeroRewards?: Record<string, ZeroRewardFractions>;
  varianceShare?: Interval & { requests: number };
  ccr?: CcrSignal;
  answersCompleted?: AnswersCompleted;
}

/** What a report is made of. */
export interface ReportInput {
  title: string;
  runs: readonly ReportRun[];
  /** Run the others are compared against (paired differences, steps-to-target). @defaultValue the first run */
  baseline?: string;
  /** A paragraph under the title (how the runs were made). @defaultValue none */
  notes?: string;
  diagnostics?: ReportDiagnostics;
}

/** Options of {@link buildReport}. */
export const REPORT_OPTIONS = {
  bootstrap: opt.nested(BOOTSTRAP_OPTIONS, 'Bootstrap of the final metrics and paired differences.'),
  window: opt.integer(CURVE_DEFAULTS.window, 'Trailing-mean window of the traces and size of the first/last summaries.', 1),
  targetMetric: opt.opaque<string>('string', 'Metric of the steps-to-target table.', 'the baseline\'s first validation metric'),
  digits: opt.integer(3, 'Decimals of metric values (differences, in points, get one fewer).', 1, 12),
};

/** What a caller writes: every option optional, the bootstrap's too. */
export type ReportOptions = Omit<opt.OptionsOf<typeof REPORT_OPTIONS>, 'bootstrap'> & { bootstrap?: BootstrapOptions };

export const REPORT_DEFAULTS = opt.defaultsOf(REPORT_OPTIONS);

/** One SVG figure; the markdown links it by `file`. */
export interface ReportFigure {
  file: string;
  title: string;
  svg: string;
}

export interface Report {
  markdown: string;
  figures: ReportFigure[];
}

interface Context {
  input: ReportInput;
  baseline: ReportRun;
  others: ReportRun[];
  bootstrap: Required<BootstrapOptions>;
  window: number;
  digits: number;
  targetMetric?: string;
  figures: Array<{ file: string; title: string; render: () => Promise<string> }>;
}

const keysOf = (runs: readonly ReportRun[], field: 'validation' | 'traces' | 'final') => [...new Set(runs.flatMap((run) => Object.keys(run[field] ?? {})))];

function finalSection(c: Context): string[] {
  const metrics = keysOf(c.input.runs, 'final');
  if (metrics.length === 0) return [];
  // one bootstrap per run: its metrics share the resampled requests
  const intervals = c.input.runs.map((run) => {
    const present = metrics.filter((m) => run.final?.[m]);
    const found = bootstrap(present.map((m) => run.final![m]), c.bootstrap);
    return new Map(present.map((m, i) => [m, found[i]]));
  });
  const rows = metrics.map((m) => [m, ...intervals.map((byMetric) => (byMetric.has(m) ? formatInterval(byMetric.get(m)!, c.digits) : '—'))]);
  const b = c.bootstrap;
  return [
    '## Final evaluation',
    `Estimate [${Math.round(b.level * 100)}% percentile bootstrap interval over requests; ${b.resamples} resamples, seed ${b.seed}].`,
    markdownTable(['metric', ...c.input.runs.map((run) => run.name)], rows),
  ];
}

/** True when every request's value lies in [0, 1] (recall, NDCG, accuracy): differences are then shown in points. */
function isFraction(series: RequestSeries): boolean {
  return series.sum.every((sum, i) => sum >= 0 && sum <= series.count[i]);
}

function pairedSection(c: Context): string[] {
  const rows: string[][] = [];
  for (const run of c.others) {
    for (const metric of Object.keys(run.final ?? {})) {
      const a = run.final![metric];
      const b = c.baseline.final?.[metric];
      if (!b || b.sum.length !== a.sum.length) continue;
      const points = isFraction(a) && isFraction(b);
      const difference = pairedBootstrap(a, b, { ...c.bootstrap, scale: points ? 100 : 1 });
      rows.push([metric, run.name, formatInterval(difference, points ? c.digits - 1 : c.digits, true), points ? 'points' : 'metric units']);
    }
  }
  if (rows.length === 0) return [];
  return [
    `## Paired differences against ${c.baseline.name}`,
    'run − baseline, the same requests resampled for both (paired percentile bootstrap); metrics in [0, 1] in points (× 100).',
    markdownTable(['metric', 'run', `difference [${Math.round(c.bootstrap.level * 100)}% interval]`, 'unit'], rows),
  ];
}

function stepsSection(c: Context): string[] {
  const metric = c.targetMetric ?? Object.keys(c.baseline.validation ?? {})[0];
  const base = metric === undefined ? undefined : c.baseline.validation?.[metric];
  if (!base || base.length === 0) return [];
  const stepB = base[base.length - 1].step;
  const results = c.others.filter((run) => run.validation?.[metric]?.length)
    .map((run) => ({ run: run.name, r: stepsToTarget(run.validation![metric], base, stepB) }));
  if (results.length === 0) return [];
  const rows = results.map(({ run, r }) => {
    const target = formatNumber(r.target, c.digits);
    if (!r.defined) return [run, target, 'not defined', '—', '—', '—'];
    return [run, target, formatNumber(r.stepA, 0), formatNumber(r.ratio, 2), formatNumber(r.timeA, 0), formatNumber(r.timeRatio, 2)];
  });
  const undefinedNote = results.some(({ r }) => !r.defined)
    ? ` Not defined: ${c.baseline.name} ended no better than its first validation (e.g. a target of 0), which every run reaches where it starts.`
    : '';
  return [
    `## Steps to target: ${metric}`,
    `The step (and elapsed time) at which each run first reaches the ${metric} of ${c.baseline.name} at its last validation step ` +
      `(${stepB}), linear between validation points; ratio = run / ${c.baseline.name}.${undefinedNote}`,
    markdownTable(['run', 'target', 'step', 'step ratio', 'time', 'time ratio'], rows),
  ];
}

function tracesSection(c: Context): string[] {
  const names = keysOf(c.input.runs, 'traces');
  if (names.length === 0) return [];
  const rows = names.flatMap((name) =>
    c.input.runs.filter((run) => run.traces?.[name]).map((run) => {
      const s = summarizeSeries(run.traces![name], c.window);
      return [name, run.name, String(s.length), formatNumber(s.first, c.digits), formatNumber(s.last, c.digits), formatNumber(s.change, c.digits)];
    }),
  );
  const lines = ['## Training traces', `Means of the first and last ${c.window} logged steps; figures show trailing means over ${c.window} steps (bold).`];
  lines.push(markdownTable(['series', 'run', 'steps', `first ${c.window}`, `last ${c.window}`, 'change'], rows));
  for (const name of names) {
    const runs = c.input.runs.filter((run) => run.traces?.[name]).map((run) => ({ run: run.name, values: run.traces![name] }));
    lines.push(figure(c, `trace-${slug(name)}.svg`, `${name} per step`, () => renderSvg(traceSpec(`${name} per step`, name, runs, c.window))));
  }
  return lines;
}

function validationFigures(c: Context): string[] {
  return keysOf(c.input.runs, 'validation').map((metric) => {
    const points = c.input.runs.flatMap((run) =>
      (run.validation?.[metric] ?? []).map((p) => ({ run: run.name, step: p.step, value: p.value, low: p.low, high: p.high })),
    );
    return figure(c, `validation-${slug(metric)}.svg`, `Validation ${metric}`, () => renderSvg(validationSpec(`Validation ${metric}`, metric, points)));
  });
}

function figure(c: Context, file: string, title: string, render: () => Promise<string>): string {
  c.figures.push({ file, title, render });
  return `![${title}](${file})`;
}

function zeroRewardLines(c: Context, zeroRewards: Record<string, ZeroRewardFractions>): string[] {
  const entries = Object.entries(zeroRewards);
  const header = ['reward target', '(request, rank) cells with all S at 0', 'requests with all S lists at 0'];
  const rows = entries.map(([target, z]) => [target, formatNumber(z.cells, 3), formatNumber(z.requests, 3)]);
  const bars = entries.flatMap(([target, z]) => [
    { target, measure: '(request, rank) cells', fraction: z.cells },
    { target, measure: 'whole requests', fraction: z.requests },
  ]);
  return [markdownTable(header, rows), figure(c, 'zero-rewards.svg', 'Zero-reward groups', () => renderSvg(zeroRewardSpec('Zero-reward groups', bars)))];
}

function answersCompletedLines({ histogram, mean, completions }: AnswersCompleted): string[] {
  return [
    `Answers completed before the cap (${completions} completions, mean ${formatNumber(mean, 2)}):`,
    markdownTable(['complete answers', ...histogram.map((_, i) => String(i))], [['completions', ...histogram.map(String)]]),
  ];
}

function diagnosticsSection(c: Context): string[] {
  const d = c.input.diagnostics;
  if (!d) return [];
  const lines = ['## Diagnostics of the learning signal'];
  if (d.zeroRewards) lines.push(...zeroRewardLines(c, d.zeroRewards));
  if (d.varianceShare) {
    const { requests } = d.varianceShare;
    lines.push(`Respondent variance share of rank advantages: ${formatInterval(d.varianceShare, 3)} over ${requests} requests with several respondents.`);
  }
  if (d.ccr) {
    const [observed, predicted] = [formatNumber(d.ccr.informative, 3), formatNumber(d.ccr.predicted, 3)];
    lines.push(`CCR informative groups: observed ${observed}, predicted from the pooled count distribution 1 − Σ p_c^S = ${predicted}.`);
  }
  if (d.answersCompleted) lines.push(...answersCompletedLines(d.answersCompleted));
  return lines;
}

function contextOf(input: ReportInput, options: ReportOptions): Context {
  const o = opt.checkOptions(REPORT_OPTIONS, opt.plainNaming('report options'), options, REPORT_DEFAULTS);
  if (typeof input?.title !== 'string' || !Array.isArray(input.runs) || input.runs.length === 0) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', 'Expected a report input { title: string, runs: [at least one run] }');
  }
  const names = input.runs.map((run) => run?.name);
  if (names.some((name) => typeof name !== 'string') || new Set(names).size !== names.length) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected runs with distinct string names but received ${JSON.stringify(names)}`);
  }
  const baseline = input.runs.find((run) => run.name === (input.baseline ?? names[0]));
  if (!baseline) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected baseline to name a run (${names.join(', ')}) but received "${input.baseline}"`);
  return {
    input,
    baseline,
    others: input.runs.filter((run) => run !== baseline),
    bootstrap: o.bootstrap,
    window: o.window,
    digits: o.digits,
    targetMetric: o.targetMetric,
    figures: [],
  };
}

/**
 * Builds the markdown summary and renders its figures: final metrics with bootstrap intervals,
 * paired differences against the baseline, steps-to-target, trace summaries, signal diagnostics,
 * validation curves with interval bands, traces with trailing means and zero-reward bars.
 */
export async function buildReport(input: ReportInput, options: ReportOptions = {}): Promise<Report> {
  const c = contextOf(input, options);
  const head = [`# ${input.title}`, ...(input.notes ? [input.notes] : [])];
  const sections = [
    finalSection(c),
    pairedSection(c),
    stepsSection(c),
    ['## Validation curves', ...validationFigures(c)],
    tracesSection(c),
    diagnosticsSection(c),
  ].filter((lines) => lines.length > 1); // a heading alone: nothing to show
  const markdown = [head, ...sections].map((lines) => lines.join('\n\n')).join('\n\n') + '\n';
  const figures = await Promise.all(c.figures.map(async ({ file, title, render }) => ({ file, title, svg: await render() })));
  return { markdown, figures };
}

/** Writes `report.md` and the figures into `dir` (created when missing); returns the written paths. */
export async function writeReport(report: Report, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files = [{ file: 'report.md', text: report.markdown }, ...report.figures.map((f) => ({ file: f.file, text: f.svg }))];
  await Promise.all(files.map(({ file, text }) => writeFile(join(dir, file), text)));
  return files.map(({ file }) => join(dir, file));
}
