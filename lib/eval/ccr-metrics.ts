/**
 * CCR evaluation: accuracy of single-problem prompts, accuracy per position within packed prompts,
 * and completion length, scored with the CCR reward's extraction and verifier (lib/rewards/ccr.ts).
 */
import { GrpoError } from '../errors.js';
import { ccrReward, type CcrRewardOptions } from '../rewards/ccr.js';
import { ratioOf, type RequestSeries } from './bootstrap.js';

/** One evaluated prompt: its completion, the references of its N problems, and optionally its token count. */
export interface CcrEvalItem {
  completion: string;
  /** truths [N] */
  truths: readonly string[];
  /** Completion length in tokens; without it lengths are in characters. */
  tokens?: number;
}

/** CCR metrics with their per-prompt series. */
export interface CcrMetrics {
  /** Correct answers / problems over prompts with N = 1 (NaN when there are none). */
  singleAccuracy: number;
  /** Correct answers / problems over every prompt. */
  accuracy: number;
  /** positionAccuracy [maxN]: accuracy of the k-th problem of the prompts with at least k problems */
  positionAccuracy: number[];
  /** Mean completion length, in `lengthUnit`. */
  length: number;
  /** "tokens" when every item gave `tokens`, else "characters". */
  lengthUnit: 'tokens' | 'characters';
  series: { singleAccuracy: RequestSeries; accuracy: RequestSeries; positionAccuracy: RequestSeries[]; length: RequestSeries };
}

const series = (n: number): RequestSeries => ({ sum: new Float64Array(n), count: new Float64Array(n) });

/**
 * Scores every prompt's completion against its references (options as {@link ccrReward}).
 * @example evaluateCcr([{ completion: 'Answer 1: \\boxed{4}', truths: ['4'] }]).singleAccuracy // 1
 */
export function evaluateCcr(items: readonly CcrEvalItem[], options?: CcrRewardOptions): CcrMetrics {
  if (!Array.isArray(items)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected items to be an array but received ${typeof items}`);
  const n = items.length;
  const maxN = items.reduce((max, item) => Math.max(max, item?.truths?.length ?? 0), 0);
  const tokens = items.every((item) => Number.isFinite(item.tokens));
  const out = { singleAccuracy: series(n), accuracy: series(n), positionAccuracy: Array.from({ length: maxN }, () => series(n)), length: series(n) };
  items.forEach((item, p) => {
    const { correct } = ccrReward(item.completion, item.truths, options);
    const right = correct.filter(Boolean).length;
    out.accuracy.sum[p] = right;
    out.accuracy.count[p] = correct.length;
    if (correct.length === 1) [out.singleAccuracy.sum[p], out.singleAccuracy.count[p]] = [right, 1];
    correct.forEach((ok, k) => {
      out.positionAccuracy[k].sum[p] = ok ? 1 : 0;
      out.positionAccuracy[k].count[p] = 1;
    });
    out.length.sum[p] = tokens ? (item.tokens as number) : item.completion.length;
    out.length.count[p] = 1;
  });
  return {
    singleAccuracy: ratioOf(out.singleAccuracy),
    accuracy: ratioOf(out.accuracy),
    positionAccuracy: out.positionAccuracy.map(ratioOf),
    length: ratioOf(out.length),
    lengthUnit: tokens && n > 0 ? 'tokens' : 'characters',
    series: out,
  };
}
