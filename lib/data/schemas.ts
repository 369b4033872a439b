// The versioned record schemas of the data files (docs/datasets.md; JSON Schema files in schemas/). These
// parsers are the one definition of a valid record: the JSON Schema files are checked against them.
import type { TitleYear } from '../text/catalog.js';
import type { QaAnswer, RecItem, SeenEntry } from '../text/records.js';
import { arrayAt, countAt, integerAt, join, mismatch, objectAt, optional, required, stringAt, stringElement } from './fields.js';
import { dataError, type JsonlLocation, type RecordParser } from './jsonl.js';

/** The version of each record kind: a record may name it in `schema`; a record without one is read as this version. */
export const SCHEMA_VERSIONS = Object.freeze({ recommend: 'recommend/1', catalog: 'catalog/1', qa: 'qa/1', math: 'math/1' } as const);

/** The kinds of data file: recommendation requests, their catalog, multi-answer questions, verifiable math problems. */
export type RecordKind = keyof typeof SCHEMA_VERSIONS;

export const RECORD_KINDS = Object.freeze(Object.keys(SCHEMA_VERSIONS) as RecordKind[]);

type Fields = Record<string, unknown>;

/** Checks the optional `schema` field of a record of `kind`. */
export function versionAt(record: Fields, kind: RecordKind, at: JsonlLocation): void {
  const version = SCHEMA_VERSIONS[kind];
  if (record.schema !== undefined && record.schema !== version) throw mismatch(at, 'schema', `"${version}" (or no "schema" field)`, record.schema);
}

/** One respondent's answer to a request: an ordered list of items (films: `{ title, year }`). */
export interface Respondent<Item extends RecItem = TitleYear> {
  id: string;
  items: Item[];
}

/**
 * A recommendation request answered by one or more respondents (`recommend/1`):
 * `{ id, request, seen?: [...], respondents: [{ id, items: [{ title, year?, creator? }] }] }`, plus the optional
 * `relevant` (latent or extra relevant items), `constraints`, `split` and `catalog` (the catalog file it is
 * matched against).
 */
export interface RecommendRecord<Item extends RecItem = RecItem> {
  id: string;
  request: string;
  seen: SeenEntry[];
  respondents: Respondent<Item>[];
  relevant?: Item[];
  constraints?: Record<string, unknown>;
  split?: string;
  catalog?: string;
}

/** A film request: every item has its year (the ±2-year rule of the film rewards needs one). */
export type RecRequest = RecommendRecord<TitleYear>;

/** `year` (integer) and `creator` (string) of an item: at least one of them, and the year when `needYear`. */
function itemKeys(item: Fields, at: JsonlLocation, path: string, needYear: boolean): { year?: number; creator?: string } {
  const year = optional(item, 'year', (r, k) => integerAt(r, k, at, path));
  const creator = optional(item, 'creator', (r, k) => stringAt(r, k, at, path));
  if (year === undefined && (needYear || creator === undefined)) {
    const expected = needYear ? 'an integer (films are told apart by their year)' : 'an integer, or a "creator" string';
    throw dataError(at, `missing (expected ${expected})`, join(path, 'year'), { expected, received: 'nothing' });
  }
  return { ...(year === undefined ? {} : { year }), ...(creator === undefined ? {} : { creator }) };
}

function itemAt(value: unknown, at: JsonlLocation, path: string, needYear: boolean): RecItem {
  const item = objectAt(value, at, path);
  return { title: stringAt(item, 'title', at, path), ...itemKeys(item, at, path, needYear) };
}

function seenAt(value: unknown, at: JsonlLocation, path: string): SeenEntry {
  if (typeof value === 'string') return value;
  const entry = objectAt(value, at, path);
  const title = stringAt(entry, 'title', at, path);
  const year = entry.year === null ? undefined : optional(entry, 'year', (r, k) => integerAt(r, k, at, path));
  const creator = optional(entry, 'creator', (r, k) => stringAt(r, k, at, path));
  return { title, ...(year === undefined ? {} : { year }), ...(creator === undefined ? {} : { creator }) };
}

function respondentAt(value: unknown, at: JsonlLocation, path: string, needYear: boolean): Respondent<RecItem> {
  const respondent = objectAt(value, at, path);
  const id = required(respondent, 'id', at, path, 'a string or number');
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id))) throw mismatch(at, `${path}.id`, 'a string or number', id);
  const items = arrayAt(respondent, 'items', at, (v, p) => itemAt(v, at, p, needYear), { path, nonEmpty: true });
  return { id: String(id), items };
}

function requestParser(needYear: boolean): RecordParser<RecommendRecord> {
  return (value, at) => {
    const record = objectAt(value, at, 'record');
    versionAt(record, 'recommend', at);
    const parsed: RecommendRecord = {
      id: stringAt(record, 'id', at),
      request: stringAt(record, 'request', at),
      seen: record.seen === undefined ? [] : arrayAt(record, 'seen', at, (v, p) => seenAt(v, at, p)),
      respondents: arrayAt(record, 'respondents', at, (v, p) => respondentAt(v, at, p, needYear), { nonEmpty: true }),
    };
    if (record.relevant !== undefined) parsed.relevant = arrayAt(record, 'relevant', at, (v, p) => itemAt(v, at, p, needYear));
    if (record.constraints !== undefined) parsed.constraints = objectAt(record.constraints, at, 'constraints');
    if (record.split !== undefined) parsed.split = stringAt(record, 'split', at);
    if (record.catalog !== undefined) parsed.catalog = stringAt(record, 'catalog', at);
    return parsed;
  };
}

/** Record parser for `recommend/1` files: items keyed by year, creator or both (see {@link RecommendRecord}). */
export const parseRecommendRecord: RecordParser<RecommendRecord> = requestParser(false);

/** Record parser for film request files: `recommend/1` with a year on every item; `seen` may be absent (= []). */
export const parseRequestRecord = requestParser(true) as RecordParser<RecRequest>;

/**
 * A `catalog/1` line: `{ title, year?, creator?, aliases?, attributes? }` with a year or a creator (or both);
 * other fields (e.g. `genres`, `cast`) are kept as they are.
 */
export interface CatalogEntry extends RecItem {
  aliases?: string[];
  attributes?: Record<string, unknown>;
  [field: string]: unknown;
}

/** A film catalog line: a `catalog/1` line with its year. */
export interface CatalogRecord extends TitleYear {
  [field: string]: unknown;
}

function catalogParser(needYear: boolean): RecordParser<CatalogEntry> {
  return (value, at) => {
    const raw = objectAt(value, at, 'record');
    versionAt(raw, 'catalog', at);
    const { schema: _version, ...record } = raw; // the version is checked, not kept
    const entry: CatalogEntry = { ...record, title: stringAt(record, 'title', at), ...itemKeys(record, at, 'record', needYear) };
    if (record.aliases !== undefined) entry.aliases = arrayAt(record, 'aliases', at, (v, p) => stringElement(v, at, p));
    if (record.attributes !== undefined) entry.attributes = objectAt(record.attributes, at, 'attributes');
    return entry;
  };
}

/** Record parser for `catalog/1` files (see {@link CatalogEntry}). */
export const parseCatalogEntry: RecordParser<CatalogEntry> = catalogParser(false);

/** Record parser for film catalogs: `title` (string) and `year` (integer) required, other fields kept. */
export const parseCatalogRecord = catalogParser(true) as RecordParser<CatalogRecord>;

/**
 * A multi-answer question (`qa/1`, ProtoQA's clusters): `{ id, question, answers: [{ text, count, aliases? }], split? }`,
 * one answer per cluster: its text, how many respondents gave it, and the other strings of the cluster.
 */
export interface QaRecord {
  id: string;
  question: string;
  answers: QaAnswer[];
  split?: string;
}

function answerAt(value: unknown, at: JsonlLocation, path: string): QaAnswer {
  const answer = objectAt(value, at, path);
  const parsed: QaAnswer = { text: stringAt(answer, 'text', at, path), count: countAt(answer, 'count', at, path) };
  if (answer.aliases === undefined) return parsed;
  return { ...parsed, aliases: arrayAt(answer, 'aliases', at, (v, p) => stringElement(v, at, p), { path }) };
}

/** Record parser for `qa/1` files (see {@link QaRecord}). */
export const parseQaRecord: RecordParser<QaRecord> = (value, at) => {
  const record = objectAt(value, at, 'record');
  versionAt(record, 'qa', at);
  const parsed: QaRecord = {
    id: stringAt(record, 'id', at),
    question: stringAt(record, 'question', at),
    answers: arrayAt(record, 'answers', at, (v, p) => answerAt(v, at, p), { nonEmpty: true }),
  };
  if (record.split !== undefined) parsed.split = stringAt(record, 'split', at);
  return parsed;
};
