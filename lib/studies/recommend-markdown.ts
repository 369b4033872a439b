// The markdown section of the recommendation study: prerequisites and diagnostics beside the paper's values,
// pooled test metrics with intervals, paired differences against rank-grpo, and the per-seed table.
import { formatNumber, markdownTable } from '../eval/report-markdown.js';
import type { TrainerConfig } from '../trainer/config.js';
import type { RecommendSummary } from './recommend-summary.js';
import type { Estimate } from './recommend-results.js';
import { TEST_METRICS, DIFFERENCE_METRICS } from './recommend-results.js';

const interval = (e: Estimate | undefined, digits = 3, signed = false) => {
  if (!e) return '—';
  const sign = signed && e.estimate > 0 ? '+' : '';
  return `${sign}${formatNumber(e.estimate, digits)} [${formatNumber(e.low, digits)}, ${formatNumber(e.high, digits)}]`;
};
const holds = (ok: boolean) => (ok ? 'holds' : '**does not hold**');

function diagnosticsTable(s: RecommendSummary): string {
  const d = s.diagnostics;
  const rows = [
    ['sampled items passing every item check', formatNumber(s.validItemFraction), '—', `≥ 0.5: ${holds(s.prerequisites.validItems)}`],
    ['zero-reward groups, one drawn respondent', formatNumber(s.zeroRewardGroups.respondent), '0.550', `< 0.9: ${holds(s.prerequisites.zeroRewardGroups)}`],
    ['zero-reward groups, union of respondents', formatNumber(s.zeroRewardGroups.union), '0.124', ''],
    ['zero-reward (request, rank) cells, respondent / union', `${formatNumber(s.zeroRewardCells.respondent)} / ${formatNumber(s.zeroRewardCells.union)}`, '—', ''],
    [`respondent variance share of rank advantages (${s.varianceShare.requests} requests with ≥ 2 respondents)`, interval(s.varianceShare), '0.85 [0.84, 0.87]', ''],
  ];
  return [`SFT policy, the same ${d.requests} validation requests × ${d.lists} sampled lists scored both ways (intervals: 95% request bootstrap, 2,000 resamples):`, '',
    markdownTable(['diagnostic', 'this run', 'ReMaRk paper (2B SFT)', 'prerequisite'], rows)].join('\n');
}

function pooledTable(s: RecommendSummary): string {
  const arms = Object.keys(s.pooled.test);
  const rows = TEST_METRICS.map((m) => [`${m}@${s.K}`, ...arms.map((arm) => interval(s.pooled.test[arm][m]))]);
  const pooled = s.seeds.length > 1 ? `pooled over seeds ${s.seeds.join(', ')} (per-request sums added)` : `seed ${s.seeds[0]}`;
  return [`Test split, the selected checkpoint of each arm, ${pooled}; rank-grpo = each seed's baseline:`, '', markdownTable(['metric', ...arms], rows)].join('\n');
}

function differenceTable(s: RecommendSummary): string {
  const arms = Object.keys(s.pooled.differences);
  const row = (label: string, d: Record<string, Estimate>) => [label, ...DIFFERENCE_METRICS.map((m) => interval(d[m], 2, true))];
  const rows = arms.map((arm) => row(`${arm} − rank-grpo`, s.pooled.differences[arm]));
  if (Object.keys(s.pooled.remarkOverAblation).length > 0) rows.push(row('remark − rank-grpo-requests', s.pooled.remarkOverAblation));
  return ['Paired differences in points (same test requests resampled for both; ReMaRk paper at R@20: ablation − rank-grpo +0.16 [−0.33, 0.66], remark − ablation +1.40 [0.93, 1.86]):', '',
    markdownTable(['', ...DIFFERENCE_METRICS.map((m) => `${m}@${s.K}`)], rows)].join('\n');
}

/** The step at which `arm` reached the seed's baseline best, its own best step for the baseline. */
function reached(r: RecommendSummary['perSeed'][number], arm: string): string {
  if (arm === r.baseline) return String(r.stepsToBaseline.baselineStep);
  if (!r.stepsToBaseline.defined) return 'not defined';
  return formatNumber(r.stepsToBaseline.arms[arm]?.step, 0);
}

function perSeedTable(s: RecommendSummary, metric: string): string {
  const rows = s.perSeed.flatMap((r) => Object.entries(r.arms).map(([arm, t]) => {
    const steps = r.stepsToBaseline.arms[arm];
    const difference = r.differences[arm]?.rowRecall;
    return [String(r.seed), arm === r.baseline ? `${arm} (baseline)` : arm, String(t.checkpointStep), formatNumber(t.bestValidation),
      interval(t.metrics.rowRecall), difference ? interval(difference, 2, true) : '—',
      reached(r, arm), steps && r.stepsToBaseline.defined ? formatNumber(steps.seconds, 0) : '—', formatNumber(t.exactKShare)];
  }));
  const header = ['seed', 'arm', 'selected step', `best validation ${metric}`, `test rowRecall@${s.K}`, 'Δ rowRecall (pts)',
    'step reaching baseline best', 'training s to it', `exact-${s.K} share`];
  return ['Per seed (steps to the baseline\'s best validation value, linear between validations; — : never reached; not defined: the baseline ' +
    'never improved on its first validation):', '', markdownTable(header, rows)].join('\n');
}

/** The study's section of summary.md (also the head of its report.md). */
export function recommendMarkdown(s: RecommendSummary, config: TrainerConfig): string {
  const settings = `${s.arms.join(', ')}: ${s.steps} steps of G ${config.groups} × S ${config.candidates}, K ${s.K}, from one SFT checkpoint; ` +
    `validation every ${config.validation.every} steps on ${config.validation.prompts || 'all'} requests, selection on ${config.validation.metric}.`;
  return [`### ReMaRk vs Rank-GRPO on movies-multi`, settings, diagnosticsTable(s), pooledTable(s), differenceTable(s), perSeedTable(s, config.validation.metric), ''].join('\n\n');
}
