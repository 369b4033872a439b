// A user's multi-answer questions (qa/1 files) and the bundled ProtoQA dev set, with the respondents of a
// question: each answer cluster of count c stands for c respondents, numbered cluster by cluster.
import { fileURLToPath } from 'node:url';
import { GrpoError } from '../errors.js';
import type { QaAnswer } from '../text/records.js';
import { readJsonlSync } from './jsonl.js';
import { parseQaRecord, type QaRecord } from './schemas.js';

/** The bundled demo questions: ProtoQA's crowdsourced dev set as `qa/1` (data/protoqa/NOTICE). */
export const PROTOQA_DEV = fileURLToPath(new URL('../../data/protoqa/protoqa-dev.jsonl', import.meta.url));

/** What a `qa/1` file holds, for the error when it cannot be read. */
export const QA_FILE = 'qa/1 JSONL: one {"id", "question", "answers": [{"text", "count"}]} record a line (docs/datasets.md)';

type Answered = { answers: readonly QaAnswer[] };

/** The respondents of a question: the sum of its answer counts (each respondent gave one answer). */
export const respondentsOf = (record: Answered): number => record.answers.reduce((n, a) => n + a.count, 0);

/** The answer cluster of respondent `r` (0-based): respondents are numbered cluster by cluster, in record order. */
export function clusterOfRespondent(record: Answered, r: number): number {
  let before = 0;
  for (let c = 0; c < record.answers.length; c++) {
    before += record.answers[c].count;
    if (r < before) return c;
  }
  throw new GrpoError('GRPO_INDEX_RANGE', `Expected a respondent below ${before} but received ${r}`);
}

/** The questions of a `qa/1` file; a question without respondents (every count 0) is refused by name. */
export function readQaFile(path: string): QaRecord[] {
  const records = readJsonlSync(path, parseQaRecord, QA_FILE);
  const silent = records.find((r) => respondentsOf(r) === 0);
  if (silent) throw new GrpoError('GRPO_DATA_FORMAT', `${path}: question "${silent.id}" has no respondents (every answer count is 0); the QA task weighs answers by their counts`);
  return records;
}
