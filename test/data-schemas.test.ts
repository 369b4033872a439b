// The record schemas: the JSON Schema files in schemas/ accept exactly the records the TypeScript parsers accept
// (on real converted records and on every one-field mutation of them), and the parsers' rules that the files
// only describe: versions, items keyed by year or creator, film files that need a year.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { protoqaToQa, redialToRequest } from '../lib/data/convert.js';
import { parseJsonl, type RecordParser } from '../lib/data/jsonl.js';
import { deepmathToMath, gsm8kToMath, mathToMath, parseMathRecord } from '../lib/data/math-record.js';
import {
  parseCatalogEntry, parseCatalogRecord, parseQaRecord, parseRecommendRecord, parseRequestRecord, RECORD_KINDS, SCHEMA_VERSIONS, type RecordKind,
} from '../lib/data/schemas.js';
import { GrpoError } from '../lib/errors.js';
import { matchesSchema } from './helpers/json-schema.js';
import { realDataText } from './helpers/real-data.js';

const schemaOf = (kind: RecordKind) => JSON.parse(readFileSync(new URL(`../schemas/${kind}-1.schema.json`, import.meta.url), 'utf8'));
const at = { source: 'x.jsonl', line: 1 };
const PARSERS: Record<RecordKind, RecordParser<unknown>> = { recommend: parseRecommendRecord, catalog: parseCatalogEntry, qa: parseQaRecord, math: parseMathRecord };

function accepts(parse: RecordParser<unknown>, value: unknown): boolean {
  try {
    parse(value, at);
    return true;
  } catch (error) {
    if (!(error instanceof GrpoError) || error.code !== 'GRPO_DATA_FORMAT') throw error;
    return false;
  }
}

/** Plain JSON values of the converted real records (first `n` of a file), with their schema field. */
function converted(kind: RecordKind, file: string, convert: RecordParser<object | null>, n: number): unknown[] {
  const lines = realDataText(file).split('\n').slice(0, n).join('\n');
  return parseJsonl(lines, convert).filter((r) => r !== null).map((r) => ({ schema: SCHEMA_VERSIONS[kind], ...r }));
}

const book = { title: 'Dune', creator: 'Frank Herbert' };
const HAND: Record<RecordKind, unknown[]> = {
  recommend: [
    { id: 'b1', request: 'space opera like Dune', seen: ['Foundation', { title: 'Hyperion', creator: 'Dan Simmons' }, { title: 'Solaris', year: null }],
      respondents: [{ id: 7, items: [book, { title: 'Ilium', year: 2003, creator: 'Dan Simmons' }] }], relevant: [book], catalog: 'books.jsonl', split: 'test', constraints: { genre: 'sf' } },
    { id: 'm1', request: 'x', respondents: [{ id: 'u', items: [{ title: 'Heat', year: 1995 }] }], note: 'extra fields are ignored' },
  ],
  catalog: [
    { schema: 'catalog/1', ...book, aliases: ['Dune (novel)'], attributes: { pages: 412 } },
    { title: 'Abbey Road', creator: 'The Beatles', year: 1969, genres: ['rock'] },
  ],
  qa: [{ id: 'q', question: 'Name a fruit', answers: [{ text: 'apple', count: 3.5, aliases: [] }, { text: 'pear', count: 0 }], split: 'train' }],
  math: [
    { id: 'a', problem: '1+1', answer: 2, difficulty: 6.5, subject: 'Arithmetic', split: 'train' },
    { id: 'b', problem: 'half', answer: '\\frac{1}{2}', solution: '…', source: 'mine' },
  ],
};

const BASES: Record<RecordKind, unknown[]> = {
  recommend: [...HAND.recommend, ...converted('recommend', 'redial-test.jsonl', redialToRequest, 12)],
  catalog: [...HAND.catalog, ...parseJsonl(realDataText('movies-catalog.jsonl').split('\n').slice(0, 12).join('\n'), (v) => v)],
  qa: [...HAND.qa, ...converted('qa', 'protoqa-dev.jsonl', protoqaToQa, 3), ...converted('qa', 'protoqa-dev-scraped.jsonl', protoqaToQa, 3)],
  math: [...HAND.math, ...converted('math', 'gsm8k-test.jsonl', gsm8kToMath, 8), ...converted('math', 'math500.jsonl', mathToMath, 8),
    ...parseJsonl('{"question":"Is 7 prime?","final_answer":"Yes","difficulty":2.0,"topic":"Number Theory"}', deepmathToMath).map((r) => ({ ...r }))],
};

const REPLACEMENTS: unknown[] = [null, 0, -1, 1.5, 1e400, 'x', '', ' ', [], [1], {}, true];

/** Every value that differs from `value` in one place: a key or element removed, or one value replaced. */
function* mutations(value: unknown): Generator<unknown> {
  for (const replacement of REPLACEMENTS) yield replacement;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      yield value.filter((_, j) => j !== i);
      for (const inner of mutations(value[i])) yield value.map((v, j) => (j === i ? inner : v));
    }
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    yield { ...record, schema: 'recommend/2' };
    for (const key of Object.keys(record)) {
      const { [key]: _, ...rest } = record;
      yield rest;
      for (const inner of mutations(record[key])) yield { ...record, [key]: inner };
    }
  }
}

describe('the JSON Schema files agree with the parsers', () => {
  it('the checker reads the subset it supports and refuses any other keyword', () => {
    expect(matchesSchema({ type: 'integer', minimum: 1 }, 2)).toBe(true);
    expect(matchesSchema({ type: 'integer' }, 2.5)).toBe(false);
    expect(matchesSchema({ type: 'number' }, 1e400)).toBe(false);
    expect(matchesSchema({ required: ['a'], properties: { a: { const: 1 } } }, { a: 2 })).toBe(false);
    expect(matchesSchema({ anyOf: [{ type: 'string', pattern: '\\S' }, { type: 'null' }] }, ' ')).toBe(false);
    expect(() => matchesSchema({ maxItems: 2 }, [])).toThrow(/keyword "maxItems" is not supported/);
  });

  for (const kind of RECORD_KINDS) {
    it(`${kind}: every base record is valid to both, and both judge each of its one-place mutations alike`, () => {
      const schema = schemaOf(kind), parse = PARSERS[kind];
      expect(schema.properties.schema.const).toBe(SCHEMA_VERSIONS[kind]);
      const disagreements: string[] = [];
      let rejected = 0, total = 0;
      for (const base of BASES[kind]) {
        expect([accepts(parse, base), matchesSchema(schema, base)]).toEqual([true, true]);
        for (const mutant of mutations(base)) {
          const byParser = accepts(parse, mutant);
          total++;
          if (!byParser) rejected++;
          if (byParser !== matchesSchema(schema, mutant)) disagreements.push(`${byParser ? 'parser' : 'schema'} accepts ${JSON.stringify(mutant).slice(0, 300)}`);
        }
      }
      expect(disagreements.slice(0, 5)).toEqual([]);
      // the mutations reach both sides of the line: many are refused, many still valid
      expect(rejected).toBeGreaterThan(total * 0.1);
      expect(rejected).toBeLessThan(total * 0.9);
    });
  }
});

describe('rules of the parsers', () => {
  it('read a record without "schema" as version 1 and refuse another version by name', () => {
    expect(parseQaRecord({ id: 'q', question: 'q', answers: [{ text: 'a', count: 1 }] }, at)).not.toHaveProperty('schema');
    expect(() => parseMathRecord({ schema: 'math/2', id: 'a', problem: 'p', answer: '1' }, at))
      .toThrow('x.jsonl:1: field "schema": expected "math/1" (or no "schema" field) but received "math/2"');
  });

  it('key an item by year, creator or both; film files need the year', () => {
    const request = { id: 'b', request: 'r', respondents: [{ id: 'u', items: [book] }] };
    expect(parseRecommendRecord(request, at).respondents[0].items).toEqual([book]);
    expect(() => parseRequestRecord(request, at)).toThrow('field "respondents[0].items[0].year": missing (expected an integer (films are told apart by their year))');
    expect(() => parseRecommendRecord({ ...request, respondents: [{ id: 'u', items: [{ title: 'Dune' }] }] }, at))
      .toThrow('field "respondents[0].items[0].year": missing (expected an integer, or a "creator" string)');
    expect(parseCatalogEntry({ schema: 'catalog/1', ...book, pages: 412 }, at)).toEqual({ ...book, pages: 412 });
    expect(() => parseCatalogRecord(book, at)).toThrow('field "year": missing');
  });

  it('read a numeric math answer as its text and refuse a blank one', () => {
    expect(parseMathRecord({ id: 'a', problem: 'p', answer: -0.5 }, at).answer).toBe('-0.5');
    expect(() => parseMathRecord({ id: 'a', problem: 'p', answer: ' \t' }, at)).toThrow('field "answer": expected a non-blank string (LaTeX) or a number but received " \\t"');
  });
});

describe('docs/datasets.md', () => {
  it('shows examples that their schema accepts, to the parser and to the JSON Schema file', () => {
    const text = readFileSync(new URL('../docs/datasets.md', import.meta.url), 'utf8');
    const sections = text.split(/^## `(\w+)\/1`/m).slice(1);
    const checked: string[] = [];
    for (let i = 0; i < sections.length; i += 2) {
      const kind = sections[i] as RecordKind;
      const block = /```json\n([\s\S]*?)```/.exec(sections[i + 1])![1];
      for (const line of block.trim().split('\n')) {
        const value = JSON.parse(line);
        expect([accepts(PARSERS[kind], value), matchesSchema(schemaOf(kind), value)]).toEqual([true, true]);
        checked.push(kind);
      }
    }
    expect(new Set(checked)).toEqual(new Set(RECORD_KINDS));
  });
});
