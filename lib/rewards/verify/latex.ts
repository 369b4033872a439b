/**
 * Scalar LaTeX expressions: parsed by @cortex-js/compute-engine (non-canonical, so the parser does
 * no arithmetic) into MathJSON, checked for size, then compared with the bounded evaluators of
 * expr.ts. The library is used only as a parser; all equivalence decisions are made here.
 */
import { ComputeEngine } from '@cortex-js/compute-engine';
import { type Budget, type MathJson, call, exactValue, floatValue, freeVariables, infinityOf, walk } from './expr.js';
import { rationalsMatch, roundsTo } from './numeric.js';
import { isInteger, toNumber } from './rational.js';
import type { Verdict } from './verdict.js';

/** A parsed scalar, or why it could not be used. */
type Parsed = { readonly json: MathJson; readonly signs: string } | { readonly error: string };

let engine: ComputeEngine | undefined;
const cache = new Map<string, Parsed>();
const CACHE_LIMIT = 4096;

function describeTree(json: MathJson, maxNodes: number): Parsed {
  let nodes = 0;
  let error: string | undefined;
  const signs: string[] = [];
  walk(json, (node) => {
    nodes++;
    const head = call(node)?.head;
    if (head === 'Error') error ??= 'the LaTeX parser reported an error';
    if (head === 'PlusMinus' || head === 'MinusPlus') signs.push(head);
  });
  if (error) return { error };
  if (nodes > maxNodes) return { error: `expression has ${nodes} nodes (limit ${maxNodes})` };
  return { json, signs: signs.join() };
}

/** Parses one scalar LaTeX string (memoised; deterministic). */
function parseScalar(latex: string, maxNodes: number): Parsed {
  const key = `${maxNodes}\u0000${latex}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let parsed: Parsed;
  try {
    engine ??= new ComputeEngine();
    parsed = describeTree(engine.parse(latex, { canonical: false }).json as MathJson, maxNodes);
  } catch (error) {
    parsed = { error: `the LaTeX parser threw: ${(error as Error)?.message ?? String(error)}` };
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, parsed);
  return parsed;
}

/** Limits and tolerance for one comparison. */
export interface ScalarLimits {
  readonly maxNodes: number;
  readonly relativeTolerance: number;
  readonly budget: Budget;
}

const verdict = (correct: boolean, method: string, detail?: string): Verdict => ({
  verdict: correct ? 'correct' : 'incorrect',
  method,
  ...(detail === undefined ? {} : { detail }),
});

/** Deterministic evaluation points in [0.5, 2): irrational-looking so that distinct functions differ. */
function points(variables: readonly string[]): Map<string, number>[] {
  const count = variables.length === 0 ? 1 : 3;
  return Array.from({ length: count }, (_, p) => {
    const values = variables.map((name, j): [string, number] => [name, 0.5 + 1.5 * (((j + 1) * 0.6180339887 + (p + 1) * 0.7548776662) % 1)]);
    return new Map(values);
  });
}

function closeEnough(a: number, b: number, relativeTolerance: number): boolean {
  return a === b || Math.abs(a - b) <= relativeTolerance * Math.max(Math.abs(a), Math.abs(b));
}

/** Compares two values that are not both rational: at deterministic points, relative tolerance. */
function compareAtPoints(given: MathJson, truth: MathJson, limits: ScalarLimits): Verdict {
  const variables = [...new Set([...freeVariables(given), ...freeVariables(truth)])].sort();
  let compared = 0;
  for (const point of points(variables)) {
    const [g, t] = [floatValue(given, point, limits.budget), floatValue(truth, point, limits.budget)];
    if (g === undefined && t === undefined) continue;
    if (g === undefined || t === undefined) {
      const which = g === undefined ? 'answer' : 'reference';
      return compared === 0 && limits.budget.steps > 0
        ? { verdict: 'unparsable', method: 'numeric-eval', detail: `the ${which} cannot be evaluated` }
        : verdict(false, 'numeric-eval', `defined on different domains`);
    }
    compared++;
    if (!closeEnough(g, t, limits.relativeTolerance)) return verdict(false, 'numeric-eval', `${g} ≠ ${t}`);
  }
  return compared > 0
    ? verdict(true, 'numeric-eval', `equal at ${compared} point(s)`)
    : { verdict: 'unparsable', method: 'numeric-eval', detail: 'neither side can be evaluated' };
}

/** Digits after the point when the reference is written as a plain decimal, else 0. */
const writtenDecimals = (latex: string) => /^-?\d*\.(\d+)$/.exec(latex)?.[1].length ?? 0;

function compareParsed(given: MathJson, truth: MathJson, truthLatex: string, limits: ScalarLimits): Verdict {
  const infinities = [infinityOf(given), infinityOf(truth)];
  if (infinities.some((v) => v !== undefined)) return verdict(infinities[0] === infinities[1], 'structure', 'infinity');
  const [g, t] = [exactValue(given, limits.budget), exactValue(truth, limits.budget)];
  const decimals = writtenDecimals(truthLatex);
  if (t && g) return verdict(rationalsMatch(g, t, decimals), 'exact');
  if (t && (isInteger(t) || decimals === 0)) return verdict(false, 'exact', 'the reference is rational; the answer is not the same rational');
  if (t) {
    const value = floatValue(given, new Map(), limits.budget);
    if (value === undefined) return { verdict: 'unparsable', method: 'decimal-rounding', detail: 'the answer cannot be evaluated' };
    return verdict(roundsTo(value, toNumber(t), decimals), 'decimal-rounding', `rounded to ${decimals} decimals`);
  }
  if (g && freeVariables(truth).length === 0) return verdict(false, 'exact', 'a rational answer for an irrational reference');
  return compareAtPoints(given, truth, limits);
}

/**
 * Compares two scalar LaTeX expressions. Rational references need an exactly equal rational answer
 * (a reference written as a decimal also accepts an irrational answer that rounds to it); otherwise
 * both sides are evaluated at deterministic points and must agree to `relativeTolerance`.
 * `±` must appear in both or neither.
 */
export function compareScalars(givenLatex: string, truthLatex: string, limits: ScalarLimits): Verdict {
  const truth = parseScalar(truthLatex, limits.maxNodes);
  if ('error' in truth) return { verdict: 'unparsable', method: 'latex', detail: `reference: ${truth.error}` };
  const given = parseScalar(givenLatex, limits.maxNodes);
  if ('error' in given) return { verdict: 'unparsable', method: 'latex', detail: `answer: ${given.error}` };
  if (given.signs !== truth.signs) return verdict(false, 'structure', '± in one side only');
  return compareParsed(given.json, truth.json, truthLatex, limits);
}
