/**
 * The CCR study's task: the bundled multi-step arithmetic problems with worked solutions written
 * longer than needed. Each step is worded, at random, in one of three styles that say the same
 * thing (a long restating sentence, a short sentence, the bare equation), so the working of one
 * problem varies in length with its number of steps and with its wording: a policy trained on it
 * can answer in many fewer tokens than it learned to, which is what a shared token cap rewards.
 */
import { generateArithmetic, type ArithmeticOptions, type ArithmeticProblem } from './arithmetic.js';
import { mixSeed, mulberry32, weightedIndex, type Random } from './rng.js';

/** A stepwise problem: `solution` is the wordy working, `concise` the shortest one (the bare equations). */
export interface StepwiseProblem extends ArithmeticProblem {
  readonly concise: string;
}

const VERBS: Readonly<Record<string, string>> = { '+': 'add', '-': 'subtract', '*': 'multiply by', '/': 'divide by' };

/** The inverse operation, for the check that the long wording adds: `c inverse(op) b = a`. */
const INVERSE: Readonly<Record<string, string>> = { '+': '-', '-': '+', '*': '/', '/': '*' };

/** The three wordings of one step `a op b = c`, longest first (the long one checks the step backwards). */
const WORDINGS: ReadonlyArray<(a: string, op: string, b: string, c: string) => string> = [
  (a, op, b, c) => `Next we ${VERBS[op]} ${b}. We had ${a}, and ${a} ${op} ${b} = ${c}. We check it: ${c} ${INVERSE[op]} ${b} = ${a}. Now we have ${c}.`,
  (a, op, b, c) => `We ${VERBS[op]} ${b}: ${a} ${op} ${b} = ${c}.`,
  (a, op, b, c) => `${a} ${op} ${b} = ${c}.`,
];

/** How often each wording is drawn: mostly long, so the SFT policy writes more than it needs, but every length occurs. */
const WORDING_WEIGHTS = Float64Array.from([0.6, 0.2, 0.2]);

/** The equations `a op b = c` of a concise arithmetic solution ("7 + 5 = 12. 12 * 3 = 36."). */
function equations(concise: string): string[][] {
  return concise.split('.').map((s) => s.trim()).filter(Boolean).map((e) => {
    const [a, op, b, , c] = e.split(' ');
    return [a, op, b, c];
  });
}

function wordy(concise: string, start: string, answer: string, random: Random): string {
  const steps = equations(concise).map(([a, op, b, c]) => WORDINGS[weightedIndex(random, WORDING_WEIGHTS, 1)](a, op, b, c));
  return [`We start with ${start}.`, ...steps, `So the result is ${answer}.`].join(' ');
}

/**
 * `count` seeded problems of {@link generateArithmetic} (same options, same questions and answers)
 * with wordy worked solutions; the wording is drawn from a stream derived from `seed`.
 * @example generateStepwise({ count: 1, seed: 1 })[0].solution // "We start with 1. Next we multiply by 5. We had 1, and 1 * 5 = 5. …"
 */
export function generateStepwise(options: Omit<ArithmeticOptions, 'style'>): StepwiseProblem[] {
  const problems = generateArithmetic({ ...options, style: 'concise' });
  const random = mulberry32(mixSeed(options.seed ?? 0, 0x5731));
  return problems.map((p) => {
    const start = /^Start with (\d+)\./.exec(p.question)![1];
    return { ...p, id: p.id.replace(/^arith/, 'stepwise'), concise: p.solution, solution: wordy(p.solution, start, p.answer, random) };
  });
}
