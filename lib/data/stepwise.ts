/**
 * The CCR study's task: the bundled multi-step arithmetic problems with worked solutions in one of two
 * styles that carry the same computation. Most are written `verbose` (every step restated and checked
 * backwards, several times longer than needed); the rest `concise` (the bare equations). A policy trained
 * on the mix writes long working by default but has the short form in its distribution: a shared token cap
 * can reward the shift, and the share of concise answers measures it.
 */
import { generateArithmetic, type ArithmeticOptions, type ArithmeticProblem } from './arithmetic.js';
import { GrpoError } from '../errors.js';
import { mixSeed, mulberry32 } from './rng.js';

export type StepwiseStyle = 'verbose' | 'concise';

/** A stepwise problem: `solution` is the working in `style`, `concise` the bare equations ("7 + 5 = 12. 12 * 3 = 36."). */
export interface StepwiseProblem extends ArithmeticProblem {
  readonly concise: string;
  readonly style: StepwiseStyle;
}

export interface StepwiseOptions extends Omit<ArithmeticOptions, 'style'> {
  /** Share of solutions written concise, in [0, 1] (default 0.15). */
  conciseShare?: number;
}

const VERBS: Readonly<Record<string, string>> = { '+': 'add', '-': 'subtract', '*': 'multiply by', '/': 'divide by' };

/** The inverse operation, for the backwards check of the verbose style: `c inverse(op) b = a`. */
const INVERSE: Readonly<Record<string, string>> = { '+': '-', '-': '+', '*': '/', '/': '*' };

/** The equations `a op b = c` of a concise arithmetic solution ("7 + 5 = 12. 12 * 3 = 36."). */
function equations(concise: string): string[][] {
  return concise.split('.').map((s) => s.trim()).filter(Boolean).map((e) => {
    const [a, op, b, , c] = e.split(' ');
    return [a, op, b, c];
  });
}

function verboseStep([a, op, b, c]: string[], index: number): string {
  return `Step ${index + 1}: we ${VERBS[op]} ${b}. Before this step we have ${a}. ${a} ${op} ${b} = ${c}. ` +
    `We check it backwards: ${c} ${INVERSE[op]} ${b} = ${a}, which is what we had. After step ${index + 1} we have ${c}.`;
}

function verbose(concise: string, start: string, answer: string): string {
  const steps = equations(concise);
  return [`We start with ${start}. There are ${steps.length} steps.`, ...steps.map(verboseStep), `All ${steps.length} steps are done, so the result is ${answer}.`].join(' ');
}

/** Whether a written solution is in the concise style: it opens with an equation, not with words. */
export function isConciseWorking(working: string): boolean {
  return /^\s*\d+ [-+*/] \d+ = \d+\./.test(working);
}

/**
 * `count` seeded problems of {@link generateArithmetic} (same options, same questions and answers) with
 * worked solutions, each concise with probability `conciseShare` (drawn from a stream derived from `seed`).
 * @example generateStepwise({ count: 1, seed: 1 })[0].solution // "We start with 1. There are 2 steps. Step 1: we multiply by 5. …"
 */
export function generateStepwise(options: StepwiseOptions): StepwiseProblem[] {
  const { conciseShare = 0.15, ...arithmetic } = options;
  if (!(conciseShare >= 0 && conciseShare <= 1)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `conciseShare must be in [0, 1], got ${conciseShare}`);
  const problems = generateArithmetic({ ...arithmetic, style: 'concise' });
  const random = mulberry32(mixSeed(options.seed ?? 0, 0x5731));
  return problems.map((p) => {
    const start = /^Start with (\d+)\./.exec(p.question)![1];
    const style: StepwiseStyle = random() < conciseShare ? 'concise' : 'verbose';
    const solution = style === 'concise' ? p.solution : verbose(p.solution, start, p.answer);
    return { ...p, id: p.id.replace(/^arith/, 'stepwise'), concise: p.solution, style, solution };
  });
}

/** The style of each `Problem k:` section of a completion, in order (sections without working are skipped). */
export function workingStyles(completion: string): StepwiseStyle[] {
  return completion.split(/Problem \d+:/).slice(1).map((section) => section.split(/Answer \d+:/)[0].trim())
    .filter(Boolean).map((working) => (isConciseWorking(working) ? 'concise' : 'verbose'));
}
