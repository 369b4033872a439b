/**
 * `verifyAnswer(given, truth)`: is a final answer equal to the reference? Precision-first,
 * deterministic, total (never throws on any answer text) and bounded (input length, nesting depth,
 * expression size and an evaluation step count; no timers).
 */
import * as opt from '../../options/schema.js';
import { checkOptions } from '../../options/schema.js';
import { compareNodes } from './compare.js';
import { normalizeAnswer } from './normalize.js';
import { compareNumericText } from './numeric.js';
import { parseAnswer, TooDeep } from './structure.js';
import type { Verdict } from './verdict.js';

export type { Verdict } from './verdict.js';
export { normalizeAnswer } from './normalize.js';

const BELOW_ONE: opt.Range = { ok: (v) => v >= 0 && v < 1, expectation: 'in [0, 1)' };

export const VERIFY_OPTIONS = {
  stringMatch: opt.boolean(true, 'Accept at once when the normalised strings are equal, before any parsing. Turn off to test the structural path alone.'),
  maxLength: opt.integer(256, 'Longest normalised answer or reference (characters) that is parsed; longer ones are decided by string '
    + 'equality alone and are otherwise `unparsable`.', 1, 1 << 20),
  maxDepth: opt.integer(24, 'Deepest bracket nesting that is parsed.', 1, 256),
  maxNodes: opt.integer(256, 'Most MathJSON nodes in one scalar expression.', 1, 1 << 16),
  maxSteps: opt.integer(20000, 'Most evaluation steps (one per visited node, for all parts and points together).', 1, 1 << 24),
  maxItems: opt.integer(32, 'Most parts in a list, set or union compared without regard to order.', 1, 4096),
  relativeTolerance: opt.number(1e-9, 'Relative tolerance when two irrational or symbolic values are compared as floats. Rational '
    + 'references (integers, fractions, decimals) never use it.', BELOW_ONE),
};

/** Options of {@link verifyAnswer}. */
export type VerifyOptions = Readonly<opt.OptionsOf<typeof VERIFY_OPTIONS>>;

/** Defaults of {@link VerifyOptions}. */
export const VERIFY_DEFAULTS = opt.defaultsOf(VERIFY_OPTIONS);

/** Validates options once; reuse the result for many calls (the CCR reward does). */
export function resolveVerifyOptions(options?: VerifyOptions): Readonly<Required<VerifyOptions>> {
  if (options === undefined) return VERIFY_DEFAULTS;
  return Object.freeze(checkOptions(VERIFY_OPTIONS, opt.plainNaming('verifyAnswer options'), options, VERIFY_DEFAULTS));
}

function decide(given: string, truth: string, o: Readonly<Required<VerifyOptions>>): Verdict {
  const [g, t] = [normalizeAnswer(given), normalizeAnswer(truth)];
  if (t === '') return { verdict: 'unparsable', method: 'string', detail: 'empty reference' };
  if (g === '') return { verdict: 'unparsable', method: 'string', detail: 'empty answer' };
  if (o.stringMatch && g === t) return { verdict: 'correct', method: 'string' };
  if (g.length > o.maxLength || t.length > o.maxLength) {
    return { verdict: 'unparsable', method: 'limit', detail: `longer than ${o.maxLength} characters` };
  }
  const numeric = compareNumericText(g, t);
  if (numeric) return numeric;
  const budget = { steps: o.maxSteps };
  const limits = { maxNodes: o.maxNodes, relativeTolerance: o.relativeTolerance, maxItems: o.maxItems, budget };
  return compareNodes(parseAnswer(g, o.maxDepth), parseAnswer(t, o.maxDepth), limits);
}

/**
 * Verifies one final answer against its reference.
 *
 * Rules, in order: normalised strings equal → correct; then the answer's structure (lists, sets,
 * intervals, tuples, relations, matrices) must match the reference's, and each scalar part must be
 * equal: exactly for rational references (an integer reference never gets a tolerance; a reference
 * written with d decimals also accepts an irrational answer that rounds to it), at deterministic
 * points to `relativeTolerance` otherwise. `±a` ≠ `a`; percent is a unit ("20\%" = "20", never 0.2);
 * equations are equal when their sides match or their differences agree up to sign.
 *
 * @param given - the answer to grade (e.g. the content of `\boxed{…}`)
 * @param truth - the reference answer
 * @returns `correct`, `incorrect`, or `unparsable` when the verifier cannot decide; never throws on
 *   any text (options are validated and throw `GrpoError`).
 * @example verifyAnswer('\\dfrac{1}{2}', '0.5') // { verdict: 'correct', method: 'exact' }
 */
export function verifyAnswer(given: unknown, truth: unknown, options?: VerifyOptions): Verdict {
  return verifyResolved(given, truth, resolveVerifyOptions(options));
}

/** {@link verifyAnswer} with options already resolved by {@link resolveVerifyOptions} (no re-validation). */
export function verifyResolved(given: unknown, truth: unknown, options: Readonly<Required<VerifyOptions>>): Verdict {
  if (typeof given !== 'string' || typeof truth !== 'string') {
    return { verdict: 'unparsable', method: 'string', detail: 'answer and reference must be strings' };
  }
  try {
    return decide(given, truth, options);
  } catch (error) {
    // Catch everything: a verifier that throws would turn into a silent zero reward upstream.
    if (error instanceof TooDeep) return { verdict: 'unparsable', method: 'limit', detail: error.message };
    return { verdict: 'unparsable', method: 'internal', detail: `${(error as Error)?.message ?? String(error)}` };
  }
}
