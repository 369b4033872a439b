/**
 * Math problem sets for CCR: GSM8K and MATH-style JSONL loaders (line-numbered errors) and a seeded
 * packer that forms groups of N problems in a fixed or shuffled order.
 */
import { readFile } from 'node:fs/promises';
import { GrpoError } from '../errors.js';
import { integer, knownKeys, oneOf } from '../validate.js';
import { lastBoxed } from '../rewards/boxed.js';
import { type NumberedRecord, jsonlObjects, stringField } from './math-jsonl.js';
import { seededRandom, shuffled } from './math-rng.js';

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

function gsm8kProblem(entry: NumberedRecord, source: string): MathProblem {
  const question = stringField(entry, 'question', source) as string;
  const answerField = stringField(entry, 'answer', source) as string;
  // The original release puts the worked solution, ending in "#### N", in `answer`.
  const solution = stringField(entry, 'solution', source, true) ?? (answerField.includes('####') ? answerField : undefined);
  const answer = answerField.includes('####') ? gsm8kFinalAnswer(answerField) : answerField.trim();
  if (!answer) throw new GrpoError('GRPO_DATA_FORMAT', `${source}:${entry.line}: empty answer`);
  const id = stringField(entry, 'id', source, true) ?? `${source}-${entry.line}`;
  return { id, question, answer, ...(solution === undefined ? {} : { solution }) };
}

function mathProblem(entry: NumberedRecord, source: string): MathProblem {
  const question = stringField(entry, 'problem', source, true) ?? stringField(entry, 'question', source);
  const solution = stringField(entry, 'solution', source, true);
  const answer = stringField(entry, 'answer', source, true) ?? (solution === undefined ? undefined : lastBoxed(solution));
  if (answer === undefined || answer.trim() === '') {
    throw new GrpoError('GRPO_DATA_FORMAT', `${source}:${entry.line}: no "answer" field and no \\boxed{…} in "solution"`);
  }
  const id = stringField(entry, 'id', source, true) ?? stringField(entry, 'unique_id', source, true) ?? `${source}-${entry.line}`;
  const level = entry.record.level;
  const subject = stringField(entry, 'subject', source, true);
  return {
    id, question: question as string, answer,
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
  return jsonlObjects(text, source).map((entry) => gsm8kProblem(entry, source));
}

/**
 * Parses MATH-style JSONL: `problem` (or `question`), `answer` (or the last `\boxed{…}` of
 * `solution`); optional `id`/`unique_id`, `solution`, `subject`, `level`.
 */
export function parseMathDataset(text: string, source = 'math'): MathProblem[] {
  return jsonlObjects(text, source).map((entry) => mathProblem(entry, source));
}

/** Reads and parses a GSM8K JSONL file. */
export async function loadGsm8k(path: string | URL): Promise<MathProblem[]> {
  return parseGsm8k(await readFile(path, 'utf8'), String(path).split('/').pop());
}

/** Reads and parses a MATH-style JSONL file (e.g. MATH-500). */
export async function loadMathDataset(path: string | URL): Promise<MathProblem[]> {
  return parseMathDataset(await readFile(path, 'utf8'), String(path).split('/').pop());
}

/** Options of {@link packGroups}. */
export interface PackGroupsOptions {
  /** Problems per group (per packed prompt). @defaultValue 3 */
  readonly n?: number;
  /** `fixed`: consecutive problems in the given order; `shuffled`: a seeded permutation first. @defaultValue 'fixed' */
  readonly order?: 'fixed' | 'shuffled';
  /** Seed of the shuffle (same seed, same groups). @defaultValue 0 */
  readonly seed?: number;
}

/** Defaults of {@link PackGroupsOptions}. */
export const PACK_GROUPS_DEFAULTS = Object.freeze({ n: 3, order: 'fixed' as const, seed: 0 });

/**
 * Forms groups of N problems. A final partial group is dropped (it would change N, and with it
 * the reward's denominator); `floor(problems.length / n)` groups are returned.
 * @example packGroups(problems, { n: 3, order: 'shuffled', seed: 7 }) // [[p12, p3, p40], …]
 */
export function packGroups<T>(problems: readonly T[], options?: PackGroupsOptions): T[][] {
  knownKeys('packGroups options', options, Object.keys(PACK_GROUPS_DEFAULTS));
  const { n, order, seed } = { ...PACK_GROUPS_DEFAULTS, ...options };
  integer('n', n, 1, 100);
  oneOf('order', order, ['fixed', 'shuffled'] as const);
  integer('seed', seed, 0, 2 ** 32 - 1);
  if (!Array.isArray(problems)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected problems to be an array but received ${typeof problems}`);
  const ordered = order === 'shuffled' ? shuffled(problems, seededRandom(seed)) : [...problems];
  return Array.from({ length: Math.floor(ordered.length / n) }, (_, g) => ordered.slice(g * n, g * n + n));
}
