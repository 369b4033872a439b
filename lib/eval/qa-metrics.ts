/**
 * Multi-answer QA (ProtoQA style): count-weighted per-respondent recall@K and union recall@K of one
 * answer list per question, matched as the QA rewards match (lib/rewards/qa.ts).
 */
import { GrpoError } from '../errors.js';
import { qaRewards, type QaRecordLike } from '../rewards/qa.js';
import { integer, length } from '../validate.js';
import { ratioOf, type RequestSeries } from './bootstrap.js';

/** QA metrics at one K, with their per-question series. */
export interface QaMetrics {
  k: number;
  /**
   * Σ count of the clusters hit in the first K / Σ count: the mean over respondents (each gave one
   * answer) of whether the list holds their answer.
   */
  countRecall: number;
  /** Clusters hit in the first K / number of clusters. */
  unionRecall: number;
  series: { countRecall: RequestSeries; unionRecall: RequestSeries };
}

const sumOf = (values: Float32Array) => values.reduce((sum, v) => sum + v, 0);

/**
 * Evaluates one answer list per question (answers one per line, each cluster counted once).
 * @example evaluateQa(['bread\nmilk'], [{ answers: [{ text: 'milk', count: 3 }, { text: 'eggs', count: 1 }] }], 10).countRecall // 0.75
 */
export function evaluateQa(completions: readonly string[], records: readonly QaRecordLike[], k = 10): QaMetrics {
  integer('k', k, 1, 10_000);
  length('completions', completions, records.length, '[questions] (one list per question)');
  // per question [questions]: count weight 1, 0 where the record has no answers
  const countRecall = { sum: new Float64Array(records.length), count: new Float64Array(records.length) };
  const unionRecall = { sum: new Float64Array(records.length), count: new Float64Array(records.length) };
  records.forEach((record, q) => {
    if (!Array.isArray(record?.answers)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected records[${q}].answers to be an array`);
    if (record.answers.length === 0) return;
    countRecall.sum[q] = sumOf(qaRewards(completions[q], record, { k, target: 'count' }).hits);
    unionRecall.sum[q] = sumOf(qaRewards(completions[q], record, { k, target: 'union' }).hits) / record.answers.length;
    countRecall.count[q] = record.answers.some((a) => a.count > 0) ? 1 : 0;
    unionRecall.count[q] = 1;
  });
  return { k, countRecall: ratioOf(countRecall), unionRecall: ratioOf(unionRecall), series: { countRecall, unionRecall } };
}
