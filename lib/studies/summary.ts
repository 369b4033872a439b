// summary.json: the machine-readable result of `grpo demo` / `grpo reproduce`, written beside summary.md at the
// output root (schema: docs/summary-json.md). `summaryProblems` checks a parsed file against the documented
// required fields, so a test (and a reader) can tell a complete summary from a broken one.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StudyScale } from './study.js';

/** One value per CCR arm. */
export interface CcrArms { grpoLong: number; grpoShort: number; ccr: number }

/** The fields of the CCR study every summary carries (the study may add more). */
export interface CcrSummaryFields {
  /** prompt + completion tokens per step, mean over steps */
  tokensPerStep: CcrArms;
  /** groups whose candidates' correct counts differ, mean over steps */
  informativeGroups: CcrArms;
}

export interface Summary<Recommend, Ccr extends CcrSummaryFields> {
  version: 1;
  /** the command line that wrote it, e.g. "grpo demo --quick" */
  command: string;
  scale: StudyScale;
  seeds: number[];
  /** wall minutes of both studies (the sum of studyMinutes) */
  minutes: number;
  /** wall minutes of each study (a study reused with --studies keeps the minutes of the run that made it) */
  studyMinutes: { recommend: number; ccr: number };
  /** CPU seconds (user + system, every thread of the process) of each study */
  cpuSeconds: { recommend: number; ccr: number };
  threads: number;
  recommend: Recommend;
  ccr: Ccr;
}

const isNumber = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const isFraction = (v: unknown) => isNumber(v) && (v as number) >= 0 && (v as number) <= 1;
/** an interval: finite estimate, low ≤ high (a bound may be null when nothing was defined) */
const isInterval = (v: unknown) => {
  const i = v as { estimate?: unknown; low?: unknown; high?: unknown };
  return i !== null && typeof i === 'object' && isNumber(i.estimate) && (i.low === null || i.high === null || (isNumber(i.low) && isNumber(i.high) && (i.low as number) <= (i.high as number)));
};

/** Required fields: dotted path → check, as listed in docs/summary-json.md. */
export const SUMMARY_REQUIRED: Readonly<Record<string, (v: unknown) => boolean>> = Object.freeze({
  version: (v) => v === 1,
  command: (v) => typeof v === 'string',
  scale: (v) => v === 'quick' || v === 'demo' || v === 'full',
  seeds: (v) => Array.isArray(v) && v.length > 0 && v.every(Number.isInteger),
  'recommend.validItemFraction': isFraction,
  'recommend.zeroRewardGroups.respondent': isFraction,
  'recommend.zeroRewardGroups.union': isFraction,
  // null estimate: not defined (no request with two respondents, or every list earned 0 under every respondent)
  'recommend.varianceShare': (v) => isInterval(v) || (v !== null && typeof v === 'object' && (v as { estimate?: unknown }).estimate === null),
  'recommend.perSeed': (v) => Array.isArray(v) && v.length > 0,
  'recommend.pooled.test.rank-grpo.rowRecall': isInterval,
  'recommend.pooled.differences.remark.rowRecall': isInterval,
  'recommend.pooled.differences.rank-grpo-requests.rowRecall': isInterval,
  'recommend.pooled.remarkOverAblation.rowRecall': isInterval,
  'cpuSeconds.recommend': isNumber,
  'cpuSeconds.ccr': isNumber,
  'ccr.tokensPerStep.grpoLong': isNumber,
  'ccr.tokensPerStep.grpoShort': isNumber,
  'ccr.tokensPerStep.ccr': isNumber,
  'ccr.informativeGroups.grpoLong': isFraction,
  'ccr.informativeGroups.grpoShort': isFraction,
  'ccr.informativeGroups.ccr': isFraction,
});

/** The value at a dotted path ("a.b.c"); keys may contain "-". */
export function valueAt(root: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), root);
}

/** The required fields that are missing or malformed (empty: the summary matches the schema). */
export function summaryProblems(summary: unknown): string[] {
  return Object.entries(SUMMARY_REQUIRED).filter(([path, ok]) => !ok(valueAt(summary, path))).map(([path]) => path);
}

/** Writes `<out>/summary.json` (non-finite numbers as null) and returns its path. */
export async function writeSummary(out: string, summary: Summary<unknown, CcrSummaryFields>): Promise<string> {
  const path = join(out, 'summary.json');
  await writeFile(path, `${JSON.stringify(summary, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`);
  return path;
}
