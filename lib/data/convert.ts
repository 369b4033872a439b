import type { TitleYear } from '../text/catalog.js';
import type { SeenEntry } from '../text/records.js';
import { arrayAt, countAt, integerAt, objectAt, stringAt, stringElement } from './fields.js';
import { readJsonlSync, type JsonlLocation } from './jsonl.js';
import type { QaRecord, RecRequest } from './schemas.js';

interface RedialMention {
  name: string;
  title: string;
  year: number | null;
}

function mentionAt(value: unknown, at: JsonlLocation, path: string): RedialMention {
  const mention = objectAt(value, at, path);
  const year = mention.year === null ? null : integerAt(mention, 'year', at, path);
  return { name: stringAt(mention, 'name', at, path), title: stringAt(mention, 'title', at, path), year };
}

function messageAt(value: unknown, at: JsonlLocation, path: string): { role: string; text: string } {
  const message = objectAt(value, at, path);
  return { role: stringAt(message, 'role', at, path), text: stringAt(message, 'text', at, path) };
}

/**
 * The seeker's opening: seeker messages before the first recommender message that names a recommended
 * film (or every seeker message when none does), joined with spaces.
 */
function seekerOpening(messages: { role: string; text: string }[], recommended: readonly string[]): string {
  const reveal = messages.findIndex((m) => m.role === 'recommender' && recommended.some((name) => m.text.includes(name)));
  const before = messages.slice(0, reveal === -1 ? messages.length : reveal).filter((m) => m.role === 'seeker');
  return before.map((m) => m.text).join(' ');
}

/**
 * One ReDial dialogue (`redial-test.jsonl` format) → one request with one respondent (the recommender):
 * `request` = the seeker's opening, `respondents[0].items` = the films labelled "suggested" that have a
 * year, `seen` = the other mentioned films (named by the seeker). Returns null when no suggested film
 * has a year (the record would have an empty respondent).
 */
export function redialToRequest(value: unknown, at: JsonlLocation): RecRequest | null {
  const record = objectAt(value, at, 'record');
  const recommended = arrayAt(record, 'recommended', at, (v, p) => stringElement(v, at, p));
  const mentions = arrayAt(record, 'mentions', at, (v, p) => mentionAt(v, at, p));
  const messages = arrayAt(record, 'messages', at, (v, p) => messageAt(v, at, p));
  const suggested = new Set(recommended);
  const items: TitleYear[] = mentions
    .filter((m): m is RedialMention & { year: number } => suggested.has(m.name) && m.year !== null)
    .map(({ title, year }) => ({ title, year }));
  if (items.length === 0) return null;
  const seen: SeenEntry[] = mentions
    .filter((m) => !suggested.has(m.name))
    .map((m) => (m.year === null ? m.title : { title: m.title, year: m.year }));
  const recommender = record.recommender_id;
  return {
    id: stringAt(record, 'id', at),
    request: seekerOpening(messages, recommended),
    seen,
    respondents: [{ id: String(recommender ?? 'recommender'), items }],
  };
}

/** What a ReDial file holds, for the error when it cannot be read. */
export const REDIAL_FILE = 'ReDial JSONL: one dialogue with messages and movieMentions a line';

/** All ReDial dialogues of a file as requests, with the number of dialogues dropped for lack of items. */
export function convertRedial(path: string): { requests: RecRequest[]; dropped: number } {
  const converted = readJsonlSync(path, redialToRequest, REDIAL_FILE);
  const requests = converted.filter((r): r is RecRequest => r !== null);
  return { requests, dropped: converted.length - requests.length };
}

interface ProtoqaCluster {
  count: number;
  answers: string[];
}

function clusterAt(value: unknown, at: JsonlLocation, path: string): ProtoqaCluster {
  const cluster = objectAt(value, at, path);
  return { count: countAt(cluster, 'count', at, path), answers: arrayAt(cluster, 'answers', at, (v, p) => stringElement(v, at, p), { path, nonEmpty: true }) };
}

/**
 * One ProtoQA record (`protoqa-dev*.jsonl` format) → a QA record: one answer per cluster, whose `count`
 * is the cluster's respondent count, `text` its most frequent raw answer and `aliases` every answer
 * string of the cluster.
 */
export function protoqaToQa(value: unknown, at: JsonlLocation): QaRecord {
  const record = objectAt(value, at, 'record');
  const rawAnswers = arrayAt(record, 'answers', at, (v, p) => {
    const answer = objectAt(v, at, p);
    return [stringAt(answer, 'text', at, p), countAt(answer, 'count', at, p)] as const;
  });
  const raw = new Map(rawAnswers);
  const clusters = arrayAt(record, 'clusters', at, (v, p) => clusterAt(v, at, p), { nonEmpty: true });
  return {
    id: stringAt(record, 'id', at),
    question: stringAt(record, 'question', at),
    answers: clusters.map((cluster) => {
      const text = [...cluster.answers].sort((a, b) => (raw.get(b) ?? 0) - (raw.get(a) ?? 0))[0];
      return { text, count: cluster.count, aliases: cluster.answers };
    }),
  };
}

/** What a ProtoQA file holds, for the error when it cannot be read. */
export const PROTOQA_FILE = 'ProtoQA JSONL: one question with answers and clusters a line';

/** All ProtoQA questions of a file as QA records. */
export function convertProtoqa(path: string): QaRecord[] {
  return readJsonlSync(path, protoqaToQa, PROTOQA_FILE);
}
