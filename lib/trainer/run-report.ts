// Reports from run directories: one run (written at the end of training) or several compared
// (paired differences on the same test prompts, steps-to-target, traces), via lib/eval/report.ts.
// A run's own report/ is replaced whole, so its presence means the run finished.
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { buildReport, REPORT_DEFAULTS, writeReport, type ReportDiagnostics, type ReportOptions, type ReportRun } from '../eval/report.js';
import type { RequestSeries } from '../eval/bootstrap.js';
import type { StepRecord } from './loop.js';
import { readJson, readJsonlRows, RunDir } from './run-dir.js';

/** Per-step series drawn in reports (when the run logged them). */
export const REPORT_TRACES = Object.freeze([
  'rewardMean', 'zeroRewardCells', 'zeroRewardGroups', 'informativeGroups', 'accuracy', 'completionLength', 'tokensPerStep',
]);

/** The selection and test metrics of a run, as saved in test.json. */
export interface TestFile {
  checkpointStep: number;
  values: Record<string, number>;
  series: Record<string, { sum: number[]; count: number[] }>;
  completions: string[];
}

function traceValue(record: StepRecord, name: string): number | undefined {
  if (name === 'completionLength') return record.completionLength.mean;
  if (name === 'tokensPerStep') return record.tokens.prompt + record.tokens.completion;
  return record.stats[name];
}

/** A run directory as the report sees it; `name` defaults to the folder name. */
export async function reportRun(dir: RunDir, name = basename(dir.path)): Promise<ReportRun> {
  const config = await dir.config();
  const metrics = await readJsonlRows<StepRecord>(dir.file('metrics'));
  const validation = await readJsonlRows<{ step: number; elapsed: number; values: Record<string, number> }>(dir.file('validation'));
  const traces: Record<string, number[]> = {};
  for (const trace of REPORT_TRACES) {
    const values = metrics.map((r) => traceValue(r, trace));
    if (values.every((v) => typeof v === 'number')) traces[trace] = values as number[];
  }
  const metric = config.validation.metric;
  const run: ReportRun = {
    name,
    traces,
    validation: { [metric]: validation.map((v) => ({ step: v.step, value: v.values[metric], time: v.elapsed })) },
  };
  if (existsSync(dir.file('test'))) {
    const test = await readJson<TestFile>(dir.file('test'));
    run.final = Object.fromEntries(Object.entries(test.series).map(([k, s]): [string, RequestSeries] =>
      [k, { sum: Float64Array.from(s.sum), count: Float64Array.from(s.count) }]));
  }
  return run;
}

/** Trailing-mean window of short runs: a quarter of the shortest trace, at most the report default (50). */
function windowFor(runs: readonly ReportRun[], options: ReportOptions): ReportOptions {
  if (options.window !== undefined) return options;
  const steps = Math.min(...runs.map((r) => Object.values(r.traces ?? {})[0]?.length ?? Infinity));
  return { ...options, window: Math.max(1, Math.min(REPORT_DEFAULTS.window, Math.floor(steps / 4))) };
}

/** Writes `<run>/report/` for one run: into a temporary folder swapped in whole, so `report/` is always complete. */
export async function writeRunReport(dir: RunDir, options: ReportOptions = {}): Promise<string[]> {
  const config = await dir.config();
  const run = await reportRun(dir);
  const report = await buildReport({ title: `Run ${run.name} (${config.recipe})`, runs: [run] }, windowFor([run], options));
  const out = dir.file('report');
  const temp = `${out}.tmp-${process.pid}`;
  await rm(temp, { recursive: true, force: true });
  const written = await writeReport(report, temp);
  await rm(out, { recursive: true, force: true });
  await rename(temp, out);
  return written.map((file) => join(out, relative(temp, file)));
}

/** Compares runs (the first is the baseline) into `out`: report.md and its figures. */
export async function compareRuns(
  dirs: readonly string[], out: string,
  input: { title?: string; names?: readonly string[]; notes?: string; diagnostics?: ReportDiagnostics } = {}, options: ReportOptions = {},
): Promise<string[]> {
  const runs = await Promise.all(dirs.map((d, i) => reportRun(new RunDir(d), input.names?.[i])));
  const title = input.title ?? `Comparison of ${runs.map((r) => r.name).join(', ')}`;
  const report = await buildReport({ title, runs, notes: input.notes, diagnostics: input.diagnostics }, windowFor(runs, options));
  return writeReport(report, out);
}
