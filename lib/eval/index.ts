// Evaluation and diagnostics: metrics, bootstrap intervals, curves, signal diagnostics, reports.
export {
  BOOTSTRAP_DEFAULTS,
  bootstrap,
  pairedBootstrap,
  quantileSorted,
  ratioOf,
  resampleRatios,
  seriesOf,
  type BootstrapOptions,
  type Interval,
  type PairedBootstrapOptions,
  type RequestSeries,
} from './bootstrap.js';
export { evaluateCcr, type CcrEvalItem, type CcrMetrics } from './ccr-metrics.js';
export {
  curveAt,
  CURVE_DEFAULTS,
  stepsToTarget,
  summarizeSeries,
  trailingMean,
  type CurvePoint,
  type SeriesSummary,
  type StepsToTarget,
  type StepsToTargetOptions,
} from './curves.js';
export {
  answersCompleted,
  ccrSignal,
  compareZeroRewards,
  countDistribution,
  predictedInformative,
  respondentRewards,
  respondentVarianceShare,
  zeroRewardFractions,
  type AnswersCompleted,
  type CcrSignal,
  type VarianceShare,
  type VarianceShareOptions,
  type ZeroRewardFractions,
} from './diagnostics.js';
export {
  evaluateRecommendations,
  rankMetrics,
  REC_EVAL_DEFAULTS,
  REC_METRICS,
  type RankMetrics,
  type RecEvalOptions,
  type RecEvalRequest,
  type RecMetric,
  type RecMetricsAtK,
} from './metrics.js';
export { logPopularity, popularityIndex, type PopularityEntry, type PopularityIndex } from './popularity.js';
export { evaluateQa, type QaMetrics } from './qa-metrics.js';
export { EVAL_SEMANTICS, type EvalSemantics } from './rec-hits.js';
export {
  buildReport,
  REPORT_DEFAULTS,
  writeReport,
  type Report,
  type ReportDiagnostics,
  type ReportFigure,
  type ReportInput,
  type ReportOptions,
  type ReportRun,
  type ValidationPoint,
} from './report.js';
export { renderSvg, traceSpec, validationSpec, zeroRewardSpec, type BandPoint } from './report-svg.js';
