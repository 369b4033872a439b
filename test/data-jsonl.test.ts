import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GrpoError } from '../lib/errors.js';
import { parseJsonl, readJsonl, readJsonlSync } from '../lib/data/jsonl.js';
import { parseCatalogRecord, parseQaRecord, parseRequestRecord } from '../lib/data/schemas.js';

const good = { id: 'q1', request: 'a heist film', seen: ['Heat', { title: 'Up', year: 2009 }], respondents: [{ id: 'u1', items: [{ title: 'Heat', year: 1995 }] }] };

function expectDataError(run: () => unknown, message: RegExp) {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GrpoError);
    expect((error as GrpoError).code).toBe('GRPO_DATA_FORMAT');
    expect((error as GrpoError).message).toMatch(message);
    return;
  }
  throw new Error('expected a GRPO_DATA_FORMAT error');
}

describe('JSONL request loader', () => {
  it('parses valid records, skips blank lines and keeps optional benchmark fields', () => {
    const text = `${JSON.stringify(good)}\n\n${JSON.stringify({ ...good, id: 'q2', split: 'test', relevant: [{ title: 'Up', year: 2009 }], constraints: { decade: 1990 } })}\r\n`;
    const records = parseJsonl(text, parseRequestRecord, 'requests.jsonl');
    expect(records.map((r) => r.id)).toEqual(['q1', 'q2']);
    expect(records[0].seen).toEqual(['Heat', { title: 'Up', year: 2009 }]);
    expect(records[1]).toMatchObject({ split: 'test', constraints: { decade: 1990 } });
  });

  const malformed: Array<[string, string, RegExp]> = [
    ['bad JSON', '{"id": "q3", ', /requests\.jsonl:3: invalid JSON/],
    ['not an object', '[1, 2]', /requests\.jsonl:3: field "record": expected an object but received an array/],
    ['missing field', JSON.stringify({ ...good, request: undefined }), /requests\.jsonl:3: field "request": missing/],
    ['wrong type', JSON.stringify({ ...good, id: 7 }), /requests\.jsonl:3: field "id": expected a string but received number 7/],
    ['empty respondent list', JSON.stringify({ ...good, respondents: [] }), /requests\.jsonl:3: field "respondents": expected at least one element/],
    ['respondent without items', JSON.stringify({ ...good, respondents: [{ id: 'u', items: [] }] }), /:3: field "respondents\[0\]\.items": expected at least one element/],
    ['string year', JSON.stringify({ ...good, respondents: [{ id: 'u', items: [{ title: 'Heat', year: '1995' }] }] }), /:3: field "respondents\[0\]\.items\[0\]\.year": expected an integer but received "1995"/],
    ['bad seen entry', JSON.stringify({ ...good, seen: [3] }), /:3: field "seen\[0\]": expected an object but received number 3/],
  ];
  for (const [name, line, message] of malformed) {
    it(`rejects ${name} with its line number and field`, () => {
      const text = [JSON.stringify(good), '', line, JSON.stringify(good)].join('\n');
      expectDataError(() => parseJsonl(text, parseRequestRecord, 'requests.jsonl'), message);
    });
  }
});

describe('catalog and QA schemas', () => {
  it('keeps extra catalog fields and rejects a non-integer year', () => {
    expect(parseJsonl('{"title":"Up","year":2009,"genres":["Animated"]}', parseCatalogRecord)).toEqual([{ title: 'Up', year: 2009, genres: ['Animated'] }]);
    expectDataError(() => parseJsonl('{"title":"Up","year":2009.5}', parseCatalogRecord, 'c.jsonl'), /c\.jsonl:1: field "year": expected an integer/);
  });

  it('validates QA answers, counts and aliases', () => {
    const [qa] = parseJsonl('{"id":"r1","question":"Name a fruit","answers":[{"text":"apple","count":3,"aliases":["apples"]}]}', parseQaRecord);
    expect(qa.answers[0]).toEqual({ text: 'apple', count: 3, aliases: ['apples'] });
    expectDataError(() => parseJsonl('{"id":"r1","question":"q","answers":[{"text":"a","count":-1}]}', parseQaRecord, 'qa'), /qa:1: field "answers\[0\]\.count": expected a finite number ≥ 0/);
    expectDataError(() => parseJsonl('{"id":"r1","question":"q","answers":[{"text":"a","count":1,"aliases":[1]}]}', parseQaRecord, 'qa'), /field "answers\[0\]\.aliases\[0\]": expected a string/);
  });
});

describe('readJsonl (streaming) and readJsonlSync', () => {
  const dir = mkdtempSync(join(tmpdir(), 'grpo-jsonl-'));

  it('streams a large file record by record with the same results as the sync reader', async () => {
    const path = join(dir, 'many.jsonl');
    const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ ...good, id: `q${i}` }));
    writeFileSync(path, lines.join('\n') + '\n');
    let count = 0;
    let last = '';
    for await (const record of readJsonl(path, parseRequestRecord)) {
      count++;
      last = record.id;
    }
    expect([count, last]).toEqual([20_000, 'q19999']);
    expect(readJsonlSync(path, parseRequestRecord)).toHaveLength(20_000);
  });

  it('reports the line number of a bad record while streaming', async () => {
    const path = join(dir, 'bad.jsonl');
    writeFileSync(path, [JSON.stringify(good), JSON.stringify(good), '{oops'].join('\n'));
    const drain = async () => {
      for await (const record of readJsonl(path, parseRequestRecord)) expect(record.id).toBe('q1');
    };
    await expect(drain()).rejects.toThrow(/bad\.jsonl:3: invalid JSON/);
  });

  it('wraps a missing file in GrpoError', () => {
    expect(() => readJsonlSync(join(dir, 'nope.jsonl'), parseRequestRecord)).toThrow(/Cannot read .*nope.jsonl \(expected a JSONL file: one JSON record a line\): ENOENT, it does not exist/);
  });
});
