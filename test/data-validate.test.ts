// `grpo data convert` and `grpo data validate` on the real datasets (convert → validate finds every record good,
// with the counts of the sources), and the bad-line report on crafted files: every bad line with its field,
// expected and received, blank lines, a BOM, CRLF line ends, very long lines and repeated ids.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { capture } from './helpers/capture.js';
import { main } from '../lib/cli/main.js';
import { convertFile, type SourceFormat } from '../lib/data/convert-file.js';
import type { DataFault } from '../lib/data/jsonl.js';
import type { RecordKind } from '../lib/data/schemas.js';
import { validateFile } from '../lib/data/validate-file.js';
import { unpackRealData } from './helpers/real-data.js';

const real = unpackRealData(['gsm8k-test.jsonl', 'math500.jsonl', 'redial-test.jsonl', 'protoqa-dev.jsonl', 'protoqa-dev-scraped.jsonl', 'movies-catalog.jsonl']);
const dir = mkdtempSync(join(tmpdir(), 'grpo-validate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function validate(file: string, kind: RecordKind) {
  const faults: DataFault[] = [];
  const summary = await validateFile(file, kind, { onBad: (fault) => faults.push(fault) });
  return { summary, faults };
}

const DEEPMATH = [
  { question: 'Evaluate $\\lim_{x\\to 0} \\frac{\\sin x}{x}$.', final_answer: '1', difficulty: 4.5, topic: 'Mathematics -> Calculus -> Limits', r1_solution_1: '…' },
  { question: 'How many primes are below 10?', final_answer: 4, difficulty: 1 },
];

describe('convert → validate on the real datasets', () => {
  const cases: [SourceFormat, string, RecordKind, number, number][] = [
    ['gsm8k', 'gsm8k-test.jsonl', 'math', 1319, 0],
    ['math', 'math500.jsonl', 'math', 500, 0],
    ['redial', 'redial-test.jsonl', 'recommend', 1316, 26],
    ['protoqa', 'protoqa-dev.jsonl', 'qa', 52, 0],
    ['protoqa', 'protoqa-dev-scraped.jsonl', 'qa', 980, 0],
  ];
  it.each(cases)('--from %s %s → %s: every record written and valid', async (from, file, kind, written, dropped) => {
    const out = join(dir, `${from}-${file}`);
    const converted = await convertFile(join(real, file), out, from);
    expect(converted).toEqual({ from, kind, read: written + dropped, written, dropped });
    const { summary, faults } = await validate(out, kind);
    expect(faults).toEqual([]);
    expect(summary).toMatchObject({ records: written, badLines: 0, blankLines: 0, lines: written, schema: `${kind}/1` });
    expect(readFileSync(out, 'utf8').split('\n', 1)[0]).toMatch(new RegExp(`^\\{"schema":"${kind}/1",`));
  });

  it('summarises each kind: respondents, items, answers, difficulty', async () => {
    const redial = (await validate(join(dir, 'redial-redial-test.jsonl'), 'recommend')).summary.stats;
    expect(redial.respondentsPerRequest).toMatchObject({ min: 1, max: 1, mean: 1 });
    expect(redial.itemsPerRespondent).toMatchObject({ min: 1, median: 3, max: 9 });
    expect(redial.itemsKeyedBy).toEqual({ year: 4315 });
    const protoqa = (await validate(join(dir, 'protoqa-protoqa-dev.jsonl'), 'qa')).summary.stats;
    expect(protoqa.answersPerQuestion).toMatchObject({ min: 4, median: 10, max: 19 });
    expect(protoqa.respondentsPerQuestion).toMatchObject({ min: 81, max: 101 });
    const math = (await validate(join(dir, 'math-math500.jsonl'), 'math')).summary.stats;
    expect(math).toMatchObject({ withSolution: 500, withDifficulty: 500, difficulty: { min: 1, max: 5 }, sources: { math: 500 } });
    const catalog = await validate(join(real, 'movies-catalog.jsonl'), 'catalog');
    expect(catalog.summary).toMatchObject({ records: 17566, badLines: 0, stats: { entriesKeyedBy: { year: 17566 } } });
  });

  it('converts DeepMath-style records (question, final_answer, difficulty, topic)', async () => {
    const source = join(dir, 'deepmath.jsonl');
    writeFileSync(source, DEEPMATH.map((r) => JSON.stringify(r)).join('\n') + '\n');
    await convertFile(source, join(dir, 'deepmath-out.jsonl'), 'deepmath');
    const lines = readFileSync(join(dir, 'deepmath-out.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { schema: 'math/1', id: 'deepmath.jsonl-1', problem: DEEPMATH[0].question, answer: '1', source: 'deepmath', difficulty: 4.5, subject: 'Mathematics -> Calculus -> Limits' },
      { schema: 'math/1', id: 'deepmath.jsonl-2', problem: DEEPMATH[1].question, answer: '4', source: 'deepmath', difficulty: 1 },
    ]);
  });

  it('stops at the first bad source line, naming it, and leaves no output behind', async () => {
    const source = join(dir, 'bad-gsm8k.jsonl');
    writeFileSync(source, '{"question":"q","answer":"#### 3"}\n{"question":"q"}\n');
    const out = join(dir, 'never.jsonl');
    await expect(convertFile(source, out, 'gsm8k')).rejects.toThrow(/bad-gsm8k\.jsonl:2: field "answer": missing \(expected a string\)/);
    expect(existsSync(out) || existsSync(`${out}.partial`)).toBe(false);
  });
});

const good = (id: string, request = 'a heist film') => ({ id, request, respondents: [{ id: 'u1', items: [{ title: 'Heat', year: 1995 }] }] });

describe('the bad-line report', () => {
  const long = 'x'.repeat(3_000_000);
  const lines = [
    `\uFEFF${JSON.stringify(good('r1'))}`, // 1: a BOM before the first record
    '', // 2: blank
    '{"id": "r3", ', // 3: bad JSON
    JSON.stringify({ ...good('r4'), id: 7 }), // 4: wrong type
    JSON.stringify({ id: 'r5', request: 'x' }), // 5: missing field
    `${JSON.stringify(good('r6'))}\r`, // 6: a CRLF line end
    JSON.stringify(good('r7', long)), // 7: a very long good line
    JSON.stringify({ ...good('r8'), respondents: [{ id: 'u', items: [{ title: 'Heat', year: long }] }] }), // 8: a very long bad value
    `{"id": "r9", "request": "${long}`, // 9: a very long line that is not JSON
    JSON.stringify(good('r1')), // 10: an id already used
    '   \t', // 11: blank
    '[1, 2]', // 12: not an object
    JSON.stringify({ ...good('r13'), schema: 'recommend/9' }), // 13: unknown version
  ];
  const file = join(dir, 'bad.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');

  it('names every bad line, its field, what was expected and what was received', async () => {
    const { summary, faults } = await validate(file, 'recommend');
    expect(summary).toMatchObject({ lines: 13, blankLines: 2, records: 3, badLines: 8 });
    expect(faults.map(({ line, field, expected, received }) => ({ line, field, expected, received }))).toEqual([
      { line: 3, field: undefined, expected: 'a JSON value', received: 'text that is not JSON' },
      { line: 4, field: 'id', expected: 'a string', received: 'number 7' },
      { line: 5, field: 'respondents', expected: 'an array', received: 'nothing' },
      { line: 8, field: 'respondents[0].items[0].year', expected: 'an integer', received: `"${'x'.repeat(40)}…"` },
      { line: 9, field: undefined, expected: 'a JSON value', received: 'text that is not JSON' },
      { line: 10, field: 'id', expected: 'an id not used by another line', received: '"r1"' },
      { line: 12, field: 'record', expected: 'an object', received: 'an array' },
      { line: 13, field: 'schema', expected: '"recommend/1" (or no "schema" field)', received: '"recommend/9"' },
    ]);
    expect(faults[0].message).toMatch(/^.*bad\.jsonl:3: invalid JSON \(/);
    expect(faults[5].message).toMatch(/bad\.jsonl:10: field "id": expected an id not used by another line but received "r1" \(line 1 has it\)$/);
    // a very long line does not make a very long report
    expect(Math.max(...faults.map((f) => f.message.length))).toBeLessThan(400);
  });

  it('reports progress in bytes up to the size of the file', async () => {
    const seen: number[] = [];
    await validateFile(file, 'recommend', { onProgress: (bytes) => seen.push(bytes) });
    expect(seen.at(-1)).toBe(statSync(file).size);
  });
});


describe('grpo data validate | convert', () => {
  afterEach(() => vi.restoreAllMocks());

  it('validate lists the bad lines and the summary, then exits with code 2', async () => {
    const io = capture();
    expect(await main(['data', 'validate', join(dir, 'bad.jsonl'), '--kind', 'recommend'])).toBe(2);
    expect(io.out()).toMatch(/bad\.jsonl:4: field "id": expected a string but received number 7\n/);
    expect(io.out()).toMatch(/recommend\/1, 3 good records, 8 bad lines, 2 blank lines \(13 lines\)\n {2}respondents per request: min 1, median 1, mean 1\.00, max 1\n/);
    expect(io.err()).toMatch(/^validate recommend: \d+\/\d+ KiB in [\d.]+ s .* — 3 good records, 8 bad lines\n/m); // the progress stream
    expect(io.err()).toMatch(/grpo data: 8 of 13 lines of .*bad\.jsonl are not valid recommend\/1 records \(listed above\)\n$/);
  });

  it('validate --json prints the summary as JSON and exits with 0 on a good file', async () => {
    const io = capture();
    expect(await main(['data', 'validate', join(real, 'movies-catalog.jsonl'), '--kind', 'catalog', '--json', '--quiet'])).toBe(0);
    expect(JSON.parse(io.out())).toMatchObject({ kind: 'catalog', records: 17566, badLines: 0 });
  });

  it('the older `grpo data redial|protoqa` spellings write what `convert --from` writes', async () => {
    capture();
    for (const from of ['redial', 'protoqa']) {
      const file = join(real, from === 'redial' ? 'redial-test.jsonl' : 'protoqa-dev.jsonl');
      expect(await main(['data', 'convert', file, '--from', from, '--out', join(dir, 'cli', `${from}-new.jsonl`), '--quiet'])).toBe(0);
      expect(await main(['data', from, file, '--out', join(dir, 'cli', `${from}-old.jsonl`), '--quiet'])).toBe(0);
      expect(readFileSync(join(dir, 'cli', `${from}-old.jsonl`), 'utf8')).toBe(readFileSync(join(dir, 'cli', `${from}-new.jsonl`), 'utf8'));
    }
    expect(readdirSync(join(dir, 'cli')).sort()).toEqual(['protoqa-new.jsonl', 'protoqa-old.jsonl', 'redial-new.jsonl', 'redial-old.jsonl']);
  });

  it.each([
    [['data', 'validate', 'x.jsonl', '--kind', 'films'], /--kind: expected one of recommend, catalog, qa, math but received "films"/],
    [['data', 'validate', 'x.jsonl'], /--kind: expected one of recommend, catalog, qa, math but received nothing/],
    [['data', 'convert', 'x.jsonl', '--from', 'squad', '--out', 'y.jsonl'], /--from: expected one of gsm8k, math, deepmath, redial, protoqa but received "squad"/],
    [['data', 'validate', '--kind', 'qa'], /grpo data validate: expected the input file after "validate"/],
    [['data', 'validate', join(dir, 'missing.jsonl'), '--kind', 'qa'], /Cannot read .*missing\.jsonl \(expected qa\/1 JSONL: .*\): ENOENT/],
  ])('grpo %j → one line, exit code 2', async (argv, message) => {
    const io = capture();
    expect(await main(argv)).toBe(2);
    expect(io.err()).toMatch(message);
    expect(io.err().trim().split('\n')).toHaveLength(1);
  });
});
