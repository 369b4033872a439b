/**
 * A bundled, seeded arithmetic task for the built-in small model: multi-step integer problems
 * ("Start with 7. Add 5. Multiply by 3. What is the result?") with exact answers and a worked
 * solution whose length grows with the number of steps, so that a shared token cap binds when
 * several problems are packed. The vocabulary is small and regular on purpose.
 */
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import { checkOptions } from '../options/schema.js';
import { integer } from '../validate.js';
import type { MathProblem } from './math.js';
import { type Random, mulberry32, randomInt } from './rng.js';

/** A uniform integer in [lo, hi], both inclusive. */
const between = (random: Random, lo: number, hi: number) => lo + randomInt(random, hi - lo + 1);

export const ARITHMETIC_OPTIONS = {
  count: opt.integer(undefined, 'Number of problems.', 0, 10_000_000, { required: true, defaultDoc: 'required' }),
  seed: opt.integer(0, 'Seed of the generator (same seed and options, same problems).', 0, 2 ** 32 - 1),
  minSteps: opt.integer(1, 'Fewest operations per problem.', 1, 64),
  maxSteps: opt.integer(4, 'Most operations per problem (the difficulty), at least minSteps.', 1, 64),
  maxValue: opt.integer(99, 'Every start value, operand result and intermediate value stays in [0, maxValue].', 10, 1_000_000),
  style: opt.choice(['concise', 'verbose'] as const, 'concise', '`"concise"`: "7 + 5 = 12." per step; `"verbose"`: one explained sentence per step.'),
};

/** Options of {@link generateArithmetic}. */
export type ArithmeticOptions = Readonly<opt.OptionsOf<typeof ARITHMETIC_OPTIONS>> & { readonly count: number };

/** Defaults of {@link ArithmeticOptions} (all but `count`). */
export const ARITHMETIC_DEFAULTS = opt.defaultsOf(ARITHMETIC_OPTIONS);

/** A generated problem; `solution` is the worked solution in the requested style. */
export interface ArithmeticProblem extends MathProblem {
  readonly solution: string;
  /** Number of operations (1…maxSteps). */
  readonly steps: number;
}

interface Step {
  readonly verb: 'Add' | 'Subtract' | 'Multiply by' | 'Divide by';
  readonly symbol: '+' | '-' | '*' | '/';
  readonly operand: number;
  readonly before: number;
  readonly after: number;
}

/** The operations possible from `value` that keep the result in [0, maxValue]. */
function nextStep(value: number, random: Random, maxValue: number): Step {
  const candidates: Step[] = [];
  const operand = between(random, 1, 9);
  const factor = between(random, 2, 5);
  if (value + operand <= maxValue) candidates.push({ verb: 'Add', symbol: '+', operand, before: value, after: value + operand });
  if (value - operand >= 0) candidates.push({ verb: 'Subtract', symbol: '-', operand, before: value, after: value - operand });
  if (value * factor <= maxValue) candidates.push({ verb: 'Multiply by', symbol: '*', operand: factor, before: value, after: value * factor });
  if (value > 0 && value % factor === 0) candidates.push({ verb: 'Divide by', symbol: '/', operand: factor, before: value, after: value / factor });
  return candidates[between(random, 0, candidates.length - 1)];
}

const equation = (s: Step) => `${s.before} ${s.symbol} ${s.operand} = ${s.after}`;

function describe(start: number, steps: readonly Step[], style: 'concise' | 'verbose'): string {
  if (style === 'concise') return steps.map((s) => `${equation(s)}.`).join(' ');
  const lines = steps.map((s) => `We ${s.verb.toLowerCase()} ${s.operand}: ${equation(s)}.`);
  return [`We start with ${start}.`, ...lines, `The result is ${steps[steps.length - 1].after}.`].join(' ');
}

function problem(index: number, random: Random, o: Required<Omit<ArithmeticOptions, 'count'>>): ArithmeticProblem {
  const count = between(random, o.minSteps, o.maxSteps);
  const start = between(random, 1, Math.min(9, o.maxValue));
  const steps: Step[] = [];
  for (let value = start; steps.length < count; value = steps[steps.length - 1].after) steps.push(nextStep(value, random, o.maxValue));
  const question = [`Start with ${start}.`, ...steps.map((s) => `${s.verb} ${s.operand}.`), 'What is the result?'].join(' ');
  const answer = String(steps[steps.length - 1].after);
  return { id: `arith-${o.seed}-${index}`, question, answer, solution: describe(start, steps, o.style), steps: count };
}

/**
 * Generates `count` seeded multi-step integer problems with exact answers.
 * @example generateArithmetic({ count: 2, seed: 1 })[0].question // "Start with 1. Multiply by 5. Multiply by 4. Subtract 4. What is the result?"
 */
export function generateArithmetic(options: ArithmeticOptions): ArithmeticProblem[] {
  if (options === null || typeof options !== 'object') throw new GrpoError('GRPO_INVALID_ARGUMENT', 'Expected an options object with count for generateArithmetic');
  const o = checkOptions(ARITHMETIC_OPTIONS, opt.plainNaming('generateArithmetic options'), options, ARITHMETIC_DEFAULTS);
  integer('maxSteps', o.maxSteps, o.minSteps, 64); // the one rule between two options
  const random = mulberry32(o.seed);
  return Array.from({ length: o.count }, (_, i) => problem(i, random, o));
}
