// The `math/1` record schema (a verifiable problem and its reference answer) and the converters of GSM8K,
// MATH(-500) and DeepMath-style lines into it.
import { countAt, mismatch, objectAt, optional, required, stringAt } from './fields.js';
import { readJsonlSync, type JsonlLocation, type RecordParser } from './jsonl.js';
import { lineId, parseGsm8kRecord, parseMathSourceRecord, type MathProblem } from './math.js';
import { versionAt } from './schemas.js';

/**
 * A verifiable math problem (`math/1`): `{ id, problem, answer, solution?, source?, difficulty?, subject?, split? }`.
 * `answer` is the reference final answer, LaTeX (`"\\frac{1}{2}"`) or a number (a JSON number is read as its
 * JavaScript text: write very large or very precise numbers as strings).
 */
export interface MathRecord {
  id: string;
  problem: string;
  answer: string;
  solution?: string;
  /** Where the problem comes from (`"gsm8k"`, `"math"`, `"deepmath"`, or any label). */
  source?: string;
  /** A number ≥ 0 on the source's scale (MATH: level 1–5; DeepMath: 1–10). */
  difficulty?: number;
  subject?: string;
  split?: string;
}

/** A reference answer: a string with a non-space character, or a finite number (kept as its text). */
function answerAt(record: Record<string, unknown>, key: string, at: JsonlLocation): string {
  const expected = 'a non-blank string (LaTeX) or a number';
  const value = required(record, key, at, 'record', expected);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string' || value.trim() === '') throw mismatch(at, key, expected, value);
  return value;
}

/** Record parser for `math/1` files (see {@link MathRecord}). */
export const parseMathRecord: RecordParser<MathRecord> = (value, at) => {
  const record = objectAt(value, at, 'record');
  versionAt(record, 'math', at);
  const text = (key: string) => optional(record, key, (r, k) => stringAt(r, k, at));
  const parsed: MathRecord = { id: stringAt(record, 'id', at), problem: stringAt(record, 'problem', at), answer: answerAt(record, 'answer', at) };
  const solution = text('solution'), source = text('source'), subject = text('subject'), split = text('split');
  const difficulty = optional(record, 'difficulty', (r, k) => countAt(r, k, at));
  return {
    ...parsed,
    ...(solution === undefined ? {} : { solution }),
    ...(source === undefined ? {} : { source }),
    ...(difficulty === undefined ? {} : { difficulty }),
    ...(subject === undefined ? {} : { subject }),
    ...(split === undefined ? {} : { split }),
  };
};

function fromProblem(problem: MathProblem, source: string): MathRecord {
  const { id, question, answer, solution, subject, level } = problem;
  return {
    id, problem: question, answer, ...(solution === undefined ? {} : { solution }), source,
    ...(level === undefined ? {} : { difficulty: level }), ...(subject === undefined ? {} : { subject }),
  };
}

/** A GSM8K line (`question`, `answer` ending in `#### N` or the bare number) → `math/1`, source "gsm8k". */
export const gsm8kToMath: RecordParser<MathRecord> = (value, at) => fromProblem(parseGsm8kRecord(value, at), 'gsm8k');

/** A MATH / MATH-500 line (`problem`, `answer` or the last `\boxed{}` of `solution`, `level`, `subject`) → `math/1`. */
export const mathToMath: RecordParser<MathRecord> = (value, at) => fromProblem(parseMathSourceRecord(value, at), 'math');

/**
 * A DeepMath-103K-style line (`question`, `final_answer`, optional `difficulty`, `topic`, `id`) → `math/1`, source
 * "deepmath", `topic` as the subject. The `r1_solution_*` traces are model outputs, not reference solutions: dropped.
 */
export const deepmathToMath: RecordParser<MathRecord> = (value, at) => {
  const record = objectAt(value, at, 'record');
  const difficulty = optional(record, 'difficulty', (r, k) => countAt(r, k, at));
  const subject = optional(record, 'topic', (r, k) => stringAt(r, k, at));
  return {
    id: optional(record, 'id', (r, k) => stringAt(r, k, at)) ?? lineId(at),
    problem: stringAt(record, 'question', at),
    answer: answerAt(record, 'final_answer', at),
    source: 'deepmath',
    ...(difficulty === undefined ? {} : { difficulty }),
    ...(subject === undefined ? {} : { subject }),
  };
};

/** What a `math/1` file holds, for the error when it cannot be read. */
export const MATH_RECORD_FILE = 'math/1 JSONL: one {"id", "problem", "answer"} record a line (docs/datasets.md)';

/** The problems of a `math/1` file, in file order, as the math task packs them (`problem` is the question). */
export function readMathProblems(path: string): MathProblem[] {
  return readJsonlSync(path, parseMathRecord, MATH_RECORD_FILE).map(({ id, problem, answer, solution }) =>
    ({ id, question: problem, answer, ...(solution === undefined ? {} : { solution }) }));
}
