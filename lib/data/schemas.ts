import type { TitleYear } from '../text/catalog.js';
import type { SeenEntry } from '../text/records.js';
import type { QaAnswer } from '../text/records.js';
import { arrayAt, countAt, integerAt, objectAt, stringAt, stringElement } from './fields.js';
import { dataError, type JsonlLocation, type RecordParser } from './jsonl.js';

/** One respondent's answer to a request: an ordered list of films. */
export interface Respondent {
  id: string;
  items: TitleYear[];
}

/**
 * A recommendation request answered by one or more respondents:
 * `{ id, request, seen: [...], respondents: [{ id, items: [{ title, year }] }] }`, plus the optional
 * fields of generated benchmarks (`relevant`: the latent relevant set, `constraints`, `split`).
 */
export interface RecRequest {
  id: string;
  request: string;
  seen: SeenEntry[];
  respondents: Respondent[];
  relevant?: TitleYear[];
  constraints?: Record<string, unknown>;
  split?: string;
}

/** A catalog line: `{ title, year, ... }` (other fields such as genres and cast are kept). */
export interface CatalogRecord extends TitleYear {
  [field: string]: unknown;
}

/** A multi-answer question: `{ id, question, answers: [{ text, count, aliases? }] }`. */
export interface QaRecord {
  id: string;
  question: string;
  answers: QaAnswer[];
}

function titleYearAt(value: unknown, at: JsonlLocation, path: string): TitleYear {
  const item = objectAt(value, at, path);
  return { title: stringAt(item, 'title', at, path), year: integerAt(item, 'year', at, path) };
}

function seenAt(value: unknown, at: JsonlLocation, path: string): SeenEntry {
  if (typeof value === 'string') return value;
  const entry = objectAt(value, at, path);
  const title = stringAt(entry, 'title', at, path);
  return entry.year === undefined || entry.year === null ? { title } : { title, year: integerAt(entry, 'year', at, path) };
}

function respondentAt(value: unknown, at: JsonlLocation, path: string): Respondent {
  const respondent = objectAt(value, at, path);
  const id = respondent.id;
  if (typeof id !== 'string' && typeof id !== 'number') throw dataError(at, 'expected a string or number id', `${path}.id`);
  const items = arrayAt(respondent, 'items', at, (v, p) => titleYearAt(v, at, p), { path, nonEmpty: true });
  return { id: String(id), items };
}

/** Record parser for request files (see {@link RecRequest}); `seen` may be absent (= []). */
export const parseRequestRecord: RecordParser<RecRequest> = (value, at) => {
  const record = objectAt(value, at, 'record');
  const request: RecRequest = {
    id: stringAt(record, 'id', at),
    request: stringAt(record, 'request', at),
    seen: record.seen === undefined ? [] : arrayAt(record, 'seen', at, (v, p) => seenAt(v, at, p)),
    respondents: arrayAt(record, 'respondents', at, (v, p) => respondentAt(v, at, p), { nonEmpty: true }),
  };
  if (record.relevant !== undefined) request.relevant = arrayAt(record, 'relevant', at, (v, p) => titleYearAt(v, at, p));
  if (record.constraints !== undefined) request.constraints = objectAt(record.constraints, at, 'constraints');
  if (record.split !== undefined) request.split = stringAt(record, 'split', at);
  return request;
};

/** Record parser for catalog files: `title` (string) and `year` (integer) required, other fields kept. */
export const parseCatalogRecord: RecordParser<CatalogRecord> = (value, at) => {
  const record = objectAt(value, at, 'record');
  return { ...record, title: stringAt(record, 'title', at), year: integerAt(record, 'year', at) };
};

function answerAt(value: unknown, at: JsonlLocation, path: string): QaAnswer {
  const answer = objectAt(value, at, path);
  const parsed: QaAnswer = { text: stringAt(answer, 'text', at, path), count: countAt(answer, 'count', at, path) };
  if (answer.aliases === undefined) return parsed;
  return { ...parsed, aliases: arrayAt(answer, 'aliases', at, (v, p) => stringElement(v, at, p), { path }) };
}

/** Record parser for multi-answer QA files (see {@link QaRecord}). */
export const parseQaRecord: RecordParser<QaRecord> = (value, at) => {
  const record = objectAt(value, at, 'record');
  return {
    id: stringAt(record, 'id', at),
    question: stringAt(record, 'question', at),
    answers: arrayAt(record, 'answers', at, (v, p) => answerAt(v, at, p), { nonEmpty: true }),
  };
};
