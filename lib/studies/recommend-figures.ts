// The study-level figures of the recommendation report: zero-reward groups under both rewards, the respondent
// variance share with its interval beside the paper's, and every arm's validation curve (all seeds), rendered
// with the report's own SVG code.
import type { TopLevelSpec } from 'vega-lite';
import { renderSvg, validationSpec, zeroRewardSpec, type BandPoint } from '../eval/report-svg.js';
import type { MechanismDiagnostics } from './recommend-diagnostics.js';

/** The paper's measurement (2B SFT model, 500 multi-respondent requests × 8 lists): 85% [84, 87]. */
export const PAPER_VARIANCE_SHARE = Object.freeze({ estimate: 0.85, low: 0.84, high: 0.87 });

function varianceShareSpec(share: MechanismDiagnostics['varianceShare']): TopLevelSpec {
  const rows = [
    { source: `this run (${share.requests} requests)`, ...share },
    { source: 'ReMaRk paper (2B SFT)', ...PAPER_VARIANCE_SHARE },
  ];
  const y = { field: 'source', type: 'nominal', title: null } as const;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Share of rank-advantage variance due to the drawn respondent (95% interval)',
    width: 420, height: { step: 36 },
    data: { values: rows },
    layer: [
      { mark: { type: 'rule', strokeWidth: 2 }, encoding: { y, x: { field: 'low', type: 'quantitative', scale: { domain: [0, 1] }, axis: { format: '%' }, title: 'share' }, x2: { field: 'high' } } },
      { mark: { type: 'point', filled: true, size: 80 }, encoding: { y, x: { field: 'estimate', type: 'quantitative' } } },
    ],
  } as TopLevelSpec;
}

/** file name → SVG text */
export async function studyFigures(d: MechanismDiagnostics, curves: readonly BandPoint[], metric: string): Promise<Record<string, string>> {
  const bars = (['respondent', 'union'] as const).flatMap((target) => [
    { target: target === 'respondent' ? 'one drawn respondent' : 'union of respondents', measure: 'whole requests (all S lists 0)', fraction: d.zeroRewardGroups[target] },
    { target: target === 'respondent' ? 'one drawn respondent' : 'union of respondents', measure: '(request, rank) cells', fraction: d.zeroRewardCells[target] },
  ]);
  return {
    'zero-rewards.svg': await renderSvg(zeroRewardSpec('Zero-reward groups of the SFT policy (same rollouts)', bars)),
    'variance-share.svg': await renderSvg(varianceShareSpec(d.varianceShare)),
    'validation.svg': await renderSvg(validationSpec(`Validation ${metric} (every arm and seed)`, metric, curves)),
  };
}
