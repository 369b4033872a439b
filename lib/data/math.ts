/**
 * Math problem sets for CCR: GSM8K and MATH-style JSONL loaders (line-numbered errors) and a seeded
 * packer that forms groups of N problems in a fixed or shuffled order.
 */
import { basename } from 'node:path';
import { GrpoError } from '../errors.js';
import { readUserText } from '../user-files.js';
import * as opt from '../options/schema.js';
import { checkOptions } from '../options/schema.js';
import { lastBoxed } from '../text/boxed.js';
import { objectAt, stringAt } from './fields.js';
import { type JsonlLocation, dataError, parseJsonl } from './jsonl.js';
import { mulberry32, shuffleInPlace } from './rng.js';

/** One verifiable problem. */
export interface MathProblem {
  readonly id: string;
  readonly question: string;
  /** Reference final answer (a number for GSM8K, LaTeX for MATH). */
  readonly answer: string;
  /** Worked reference solution, when the data set has one. */
  readonly solution?: string;
  readonly subject?: string;
  readonly level?: number;
}

/** GSM8K answer text: after the last `####`, commas removed ("#### 1,000" → "1000"). */
export function gsm8kFinalAnswer(solution: string): string | undefined {
  const at = solution.lastIndexOf('####');
  return at < 0 ? undefined : solution.slice(at + 4).trim().replace(/,/g, '');
}

type Fields = Record<string, unknown>;

/** An optional string field: absent → `undefined`, present → must be a string. */
const optionalString = (record: Fields, key: string, at: JsonlLocation) =>
  record[key] === undefined ? undefined : stringAt(record, key, at);

/** The id of a record without one: the file's name and the line ("gsm8k-test.jsonl-12"). */
export const lineId = (at: JsonlLocation) => `${basename(at.source)}-${at.line}`;

/** Record parser for GSM8K lines (see {@link parseGsm8k}). */
export function parseGsm8kRecord(value: unknown, at: JsonlLocation): MathProblem {
  const record = objectAt(value, at, 'record');
  const question = stringAt(record, 'question', at);
  const answerField = stringAt(record, 'answer', at);
  // The original release puts the worked solution, ending in "#### N", in `answer`.
  const original = answerField.includes('####');
  const solution = optionalString(record, 'solution', at) ?? (original ? answerField : undefined);
  const answer = original ? gsm8kFinalAnswer(answerField) : answerField.trim();
  if (!answer) throw dataError(at, 'empty answer', 'answer');
  const id = optionalString(record, 'id', at) ?? lineId(at);
  return { id, question, answer, ...(solution === undefined ? {} : { solution }) };
}

/** Record parser for MATH-style lines (see {@link parseMathDataset}). */
export function parseMathSourceRecord(value: unknown, at: JsonlLocation): MathProblem {
  const record = objectAt(value, at, 'record');
  const question = optionalString(record, 'problem', at) ?? stringAt(record, 'question', at);
  const solution = optionalString(record, 'solution', at);
  const answer = optionalString(record, 'answer', at) ?? (solution === undefined ? undefined : lastBoxed(solution));
  if (answer === undefined || answer.trim() === '') throw dataError(at, 'no "answer" and no \\boxed{…} in "solution"', 'answer');
  const id = optionalString(record, 'id', at) ?? optionalString(record, 'unique_id', at) ?? lineId(at);
  const subject = optionalString(record, 'subject', at);
  const level = record.level;
  return {
    id, question, answer,
    ...(solution === undefined ? {} : { solution }),
    ...(subject === undefined ? {} : { subject }),
    ...(typeof level === 'number' ? { level } : {}),
  };
}

/**
 * Parses GSM8K JSONL: `question` and `answer`, where `answer` is either the final number or the
 * original worked solution ending in `#### N`; optional `id`, `solution`.
 * @param source - name used in error messages ("gsm8k-test.jsonl:12: …")
 */
export function parseGsm8k(text: string, source = 'gsm8k'): MathProblem[] {
  return parseJsonl(text, parseGsm8kRecord, source);
}

/**
 * Parses MATH-style JSONL: `problem` (or `question`), `answer` (or the last `\boxed{…}` of
 * `solution`); optional `id`/`unique_id`, `solution`, `subject`, `level`.
 */
export function parseMathDataset(text: string, source = 'math'): MathProblem[] {
  return parseJsonl(text, parseMathSourceRecord, source);
}

/** What a GSM8K or a MATH-style file holds, for the error when it cannot be read. */
export const GSM8K_FILE = 'GSM8K JSONL: one {"question", "answer"} record a line';
export const MATH_FILE = 'MATH-style JSONL: one {"problem", "answer" or "solution"} record a line';

/** Reads and parses a GSM8K JSONL file. */
export async function loadGsm8k(path: string | URL): Promise<MathProblem[]> {
  const text = await readUserText(path, GSM8K_FILE);
  return parseGsm8k(text, String(path).split('/').pop());
}

/** Reads and parses a MATH-style JSONL file (e.g. MATH-500). */
export async function loadMathDataset(path: string | URL): Promise<MathProblem[]> {
  const text = await readUserText(path, MATH_FILE);
  return parseMathDataset(text, String(path).split('/').pop());
}

export const PACK_GROUPS_OPTIONS = {
  n: opt.integer(3, 'Problems per group (per packed prompt).', 1, 100),
  order: opt.choice(['fixed', 'shuffled'] as const, 'fixed', '`"fixed"`: consecutive problems in the given order; `"shuffled"`: a seeded permutation first.'),
  seed: opt.integer(0, 'Seed of the shuffle (same seed, same groups).', 0, 2 ** 32 - 1),
};

/** Options of {@link packGroups}. */
export type PackGroupsOptions = opt.OptionsOf<typeof PACK_GROUPS_OPTIONS>;

export const PACK_GROUPS_DEFAULTS = opt.defaultsOf(PACK_GROUPS_OPTIONS);

/**
 * Forms groups of N problems. A final partial group is dropped (it would change N, and with it
 * the reward's denominator); `floor(problems.length / n)` groups are returned.
 * @example packGroups(problems, { n: 3, order: 'shuffled', seed: 7 }) // [[p12, p3, p40], …]
 */
export function packGroups<T>(problems: readonly T[], options?: PackGroupsOptions): T[][] {
  const { n, order, seed } = checkOptions(PACK_GROUPS_OPTIONS, opt.plainNaming('packGroups options'), options, PACK_GROUPS_DEFAULTS);
  if (!Array.isArray(problems)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected problems to be an array but received ${typeof problems}`);
  const ordered = order === 'shuffled' ? shuffleInPlace([...problems], mulberry32(seed)) : [...problems];
  return Array.from({ length: Math.floor(ordered.length / n) }, (_, g) => ordered.slice(g * n, g * n + n));
}
