/**
 * Multi-answer QA (ProtoQA style): count-weighted per-respondent recall@K and union recall@K of one
 * answer list per question, parsed and matched as the QA rewards do (lib/rewards/qa.ts).
 */
import { GrpoError } from '../errors.js';
import { answerIndex, parseAnswers, type QaRecordLike } from '../rewards/qa.js';
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

/** [Σ count of the clusters hit in the first K, clusters hit], in float64 (the rewards store float32). */
function clustersHit(text: string, record: QaRecordLike, k: number): [number, number] {
  let counted = 0;
  let clusters = 0;
  for (const answer of parseAnswers(text, answerIndex(record)).slice(0, k)) {
    if (answer.cluster < 0 || answer.duplicate) continue;
    counted += record.answers[answer.cluster].count;
    clusters++;
  }
  return [counted, clusters];
}

/**
 * Evaluates one answer list per question (answers one per line, each cluster counted once).
 * @example evaluateQa(['bread\nmilk'], [{ answers: [{ text: 'milk', count: 3 }, { text: 'eggs', count: 1 }] }], 10).countRecall // 0.75
 */
export function evaluateQa(completions: readonly string[], records: readonly QaRecordLike[], k = 10): QaMetrics {
  integer('k', k, 1, 10_000);
  if (!Array.isArray(records as unknown) || !Array.isArray(completions as unknown)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected arrays of completions and records but received ${typeof completions} and ${typeof records}`);
  }
  length('completions', completions, records.length, '[questions] (one list per question)');
  // per question [questions]: count weight 1, 0 where the record has no answers
  const countRecall = { sum: new Float64Array(records.length), count: new Float64Array(records.length) };
  const unionRecall = { sum: new Float64Array(records.length), count: new Float64Array(records.length) };
  records.forEach((record, q) => {
    if (!Array.isArray(record?.answers)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected records[${q}].answers to be an array`);
    if (typeof completions[q] !== 'string') throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected completions[${q}] to be a string`);
    if (record.answers.length === 0) return;
    const total = record.answers.reduce((sum, a) => sum + a.count, 0);
    const [counted, clusters] = clustersHit(completions[q], record, k);
    [countRecall.sum[q], countRecall.count[q]] = total > 0 ? [counted / total, 1] : [0, 0];
    [unionRecall.sum[q], unionRecall.count[q]] = [clusters / record.answers.length, 1];
  });
  return { k, countRecall: ratioOf(countRecall), unionRecall: ratioOf(unionRecall), series: { countRecall, unionRecall } };
}
