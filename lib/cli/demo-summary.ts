// The demo's summary: for each pair of runs on the same test prompts, every test metric with its
// bootstrap interval, the paired difference, steps-to-target, and training-signal means from the logs.
import { bootstrap, pairedBootstrap, type RequestSeries } from '../eval/bootstrap.js';
import { stepsToTarget } from '../eval/curves.js';
import { formatInterval, formatNumber, markdownTable } from '../eval/report-markdown.js';
import type { StepRecord } from '../trainer/loop.js';
import { readJson, readJsonlRows, RunDir } from '../trainer/run-dir.js';
import type { TestFile } from '../trainer/run-report.js';

/** A pair to compare: `other` − `baseline`. */
export interface Pair {
  title: string;
  baseline: { name: string; dir: string };
  other: { name: string; dir: string };
  /** Test metrics shown, in order. */
  metrics: readonly string[];
  /** Per-step statistics averaged over the training log. */
  trainingMeans: readonly { label: string; value: (r: StepRecord) => number }[];
}

const seriesOf = (s: { sum: number[]; count: number[] }): RequestSeries => ({ sum: Float64Array.from(s.sum), count: Float64Array.from(s.count) });

const isFraction = (s: RequestSeries) => s.sum.every((v, i) => v >= 0 && v <= s.count[i]);

function mean(rows: readonly StepRecord[], value: (r: StepRecord) => number): number {
  const values = rows.map(value).filter(Number.isFinite);
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

async function runData(dir: string) {
  const run = new RunDir(dir);
  return {
    test: await readJson<TestFile>(run.file('test')),
    metrics: await readJsonlRows<StepRecord>(run.file('metrics')),
    validation: await readJsonlRows<{ step: number; elapsed: number; values: Record<string, number> }>(run.file('validation')),
    metric: (await run.config()).validation.metric,
  };
}

function metricRows(pair: Pair, a: TestFile, b: TestFile): string[][] {
  return pair.metrics.filter((m) => a.series[m] && b.series[m]).map((m) => {
    const [sa, sb] = [seriesOf(a.series[m]), seriesOf(b.series[m])];
    const points = isFraction(sa) && isFraction(sb);
    const [ia] = bootstrap([sa]);
    const [ib] = bootstrap([sb]);
    const d = pairedBootstrap(sb, sa, { scale: points ? 100 : 1 });
    return [`test ${m}`, formatInterval(ia), formatInterval(ib), `${formatInterval(d, 2, true)}${points ? ' pts' : ''}`];
  });
}

/** The steps (and time) `other` needs to reach `baseline`'s final validation value. */
function stepsRow(metric: string, base: Awaited<ReturnType<typeof runData>>, other: Awaited<ReturnType<typeof runData>>): string[] {
  const curve = (v: typeof base.validation) => v.map((p) => ({ step: p.step, value: p.values[metric], time: p.elapsed }));
  const [a, b] = [curve(other.validation), curve(base.validation)];
  if (a.length === 0 || b.length === 0) return [];
  const r = stepsToTarget(a, b, b[b.length - 1].step);
  const label = `steps to baseline's final validation ${metric} (${formatNumber(r.target)})`;
  // a target the baseline already had at its first validation says nothing about speed
  if (!(r.target > b[0].value)) return [label, String(r.stepB), '—', 'baseline did not improve after its first validation'];
  return [label, String(r.stepB), formatNumber(r.stepA, 0), `ratio ${formatNumber(r.ratio, 2)}`];
}

/** The markdown table of one pair. */
export async function pairTable(pair: Pair): Promise<string> {
  const [base, other] = await Promise.all([runData(pair.baseline.dir), runData(pair.other.dir)]);
  const rows = metricRows(pair, base.test, other.test);
  const steps = stepsRow(base.metric, base, other);
  if (steps.length > 0) rows.push(steps);
  for (const { label, value } of pair.trainingMeans) {
    const [ma, mb] = [mean(base.metrics, value), mean(other.metrics, value)];
    rows.push([`train ${label} (mean over steps)`, formatNumber(ma), formatNumber(mb), formatNumber(mb - ma)]);
  }
  rows.push(['selected checkpoint (step)', String(base.test.checkpointStep), String(other.test.checkpointStep), '']);
  const header = ['', pair.baseline.name, pair.other.name, `${pair.other.name} − ${pair.baseline.name}`];
  return [`### ${pair.title}`, '', markdownTable(header, rows), ''].join('\n');
}
