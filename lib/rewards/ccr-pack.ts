/**
 * The prompt side of CCR: N problems packed into one prompt with distinct labels, and the ideal
 * completion for such a prompt.
 */
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import { checkOptions } from '../options/schema.js';

/** A problem to pack: its question text, or an object with a `question`. */
export type PackableProblem = string | { readonly question: string };

/** Builds the prompt from the questions (in order); must ask for `Answer k: \boxed{…}` lines. */
export type CcrTemplate = (questions: readonly string[]) => string;

/** The default prompt: "Problem 1" … "Problem N" and the `Answer k: \boxed{…}` instruction. */
export const defaultCcrTemplate: CcrTemplate = (questions) => {
  const many = questions.length > 1;
  const head = many
    ? `Solve each of the following ${questions.length} problems. Show your reasoning for each problem, ` +
      'then end its solution with a line of the form "Answer k: \\boxed{your answer}", where k is the problem number.'
    : 'Solve the following problem. Show your reasoning, ' +
      'then end your solution with a line of the form "Answer 1: \\boxed{your answer}".';
  return [head, ...questions.map((q, i) => `Problem ${i + 1}: ${q.trim()}`)].join('\n\n');
};

export const CCR_PACK_OPTIONS = {
  n: opt.integer(3, 'Problems per prompt; must equal the number passed. 1 is the plain GRPO baseline.', 1, 100),
  template: opt.callback<CcrTemplate>(defaultCcrTemplate, '(questions) => string', 'Prompt builder; must ask for `Answer k: \\boxed{…}` lines.', '`defaultCcrTemplate`'),
};

/** Options of {@link packProblems}. */
export type CcrPackOptions = Readonly<opt.OptionsOf<typeof CCR_PACK_OPTIONS>>;

/** Defaults of {@link CcrPackOptions}. */
export const CCR_PACK_DEFAULTS = opt.defaultsOf(CCR_PACK_OPTIONS);

function questionOf(problem: unknown, i: number): string {
  const q = typeof problem === 'string' ? problem : (problem as { question?: unknown } | null)?.question;
  if (typeof q !== 'string' || q.trim() === '') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected problems[${i}] to be a non-empty string or { question: string }`);
  }
  return q;
}

/**
 * Packs N problems into one prompt with distinct labels ("Problem 1" … "Problem N").
 * @example packProblems(['1+1?', '2+3?', '4*5?']) // "Solve each of the following 3 problems. …"
 */
export function packProblems(problems: readonly PackableProblem[], options?: CcrPackOptions): string {
  const { n, template } = checkOptions(CCR_PACK_OPTIONS, opt.plainNaming('packProblems options'), options, CCR_PACK_DEFAULTS);
  if (!Array.isArray(problems) || problems.length !== n) {
    const received = Array.isArray(problems) ? problems.length : typeof problems;
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected problems of length n = ${n} but received ${received}`);
  }
  return template(problems.map(questionOf));
}

/**
 * A completion that answers every problem of a group in the expected format: each worked solution
 * (when given) followed by `Answer k: \boxed{answer}`. Useful as a supervised target and in tests.
 */
export function ccrReferenceCompletion(problems: readonly { readonly answer: string; readonly solution?: string }[]): string {
  const worked = (solution: string | undefined) => (solution === undefined ? '' : `${solution.trim()}\n`);
  return problems.map((p, i) => `Problem ${i + 1}: ${worked(p.solution)}Answer ${i + 1}: \\boxed{${p.answer}}`).join('\n\n');
}
