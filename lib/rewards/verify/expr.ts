/**
 * Bounded evaluation of MathJSON trees (as parsed by @cortex-js/compute-engine, non-canonical).
 * Two evaluators: exact (BigInt rationals, `undefined` when the value is not a rational) and float
 * (at a point: free symbols → numbers). Both spend one step of a shared budget per node, so the work
 * per answer is bounded by a count, never by a timer.
 */
import * as Q from './rational.js';
import type { Rational } from './rational.js';

/** A MathJSON expression as produced by the parser. */
export type MathJson = number | string | MathJsonObject | readonly MathJson[];
interface MathJsonObject {
  readonly num?: string;
  readonly sym?: string;
  readonly str?: string;
  readonly fn?: readonly MathJson[];
}

/** Steps left to spend; every visited node costs one. */
export interface Budget {
  steps: number;
}

/** Thrown inside this module only and caught by its exported wrappers. */
class NotEvaluable extends Error {}

function spend(budget: Budget): void {
  if (--budget.steps < 0) throw new NotEvaluable('step budget exhausted');
}

/** The head and arguments of a function node, or `undefined` for a leaf. */
export function call(json: MathJson): { head: string; args: readonly MathJson[] } | undefined {
  const list = Array.isArray(json) ? json : typeof json === 'object' && 'fn' in json ? json.fn : undefined;
  if (!list || typeof list[0] !== 'string') return undefined;
  return { head: list[0], args: list.slice(1) };
}

function leaf(json: MathJson): number | string | undefined {
  if (typeof json === 'number' || typeof json === 'string') return json;
  if (Array.isArray(json)) return undefined;
  const object = json as MathJsonObject;
  return object.num ?? object.sym ?? (object.str === undefined ? undefined : `'${object.str}'`);
}

/** Calls `visit` on every node, depth first. */
export function walk(json: MathJson, visit: (node: MathJson, depth: number) => void, depth = 0): void {
  visit(json, depth);
  for (const arg of call(json)?.args ?? []) walk(arg, visit, depth + 1);
}

const CONSTANTS: Readonly<Record<string, number>> = { Pi: Math.PI, e: Math.E, ExponentialE: Math.E };
const INFINITIES: Readonly<Record<string, number>> = { PositiveInfinity: Infinity, NegativeInfinity: -Infinity };

/** A symbol that is a free variable (not a constant, not a quoted string, not a number text). */
export function isVariable(name: string): boolean {
  return !(name in CONSTANTS) && !(name in INFINITIES) && !name.startsWith("'") && !/^[\d.+-]/.test(name);
}

/** Subscripted symbols (`x_1` → ["At","x",1]) become one variable name. */
function subscriptName(args: readonly MathJson[]): string | undefined {
  const base = leaf(args[0]);
  const index = leaf(args[1]);
  return typeof base === 'string' && isVariable(base) && index !== undefined ? `${base}_${index}` : undefined;
}

/** `52_8` (an integer with a numeric subscript 2…36) is a numeral in that base: 42. */
function baseNumeral(args: readonly MathJson[]): Rational | undefined {
  const [digits, base] = [leaf(args[0]), leaf(args[1])];
  if (typeof base !== 'number' || !Number.isInteger(base) || base < 2 || base > 36) return undefined;
  if (!(typeof digits === 'number' && Number.isSafeInteger(digits) && digits >= 0)) return undefined;
  let value = 0n;
  for (const ch of String(digits)) {
    const digit = parseInt(ch, 36);
    if (digit >= base) return undefined;
    value = value * BigInt(base) + BigInt(digit);
  }
  return Q.rational(value);
}

function literal(json: MathJson): Rational | undefined {
  const value = leaf(json);
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) ? { num: BigInt(value), den: 1n } : Q.fromDecimalString(String(value));
  }
  return typeof value === 'string' ? Q.fromDecimalString(value) : undefined;
}

/** `2\frac{1}{2}` (invisible operator between an integer and a numeric fraction) is a mixed number. */
function mixedNumber(args: readonly MathJson[]): readonly [Rational, Rational] | undefined {
  if (args.length !== 2 || typeof args[0] !== 'number' || !Number.isSafeInteger(args[0])) return undefined;
  const fraction = call(args[1]);
  if (!fraction || (fraction.head !== 'Divide' && fraction.head !== 'Rational')) return undefined;
  const [num, den] = fraction.args.map(literal);
  if (!num || !den || !Q.isInteger(num) || !Q.isInteger(den)) return undefined;
  const part = Q.rational(num.num, den.num);
  return part && [{ num: BigInt(args[0]), den: 1n }, part];
}

/** The single expression inside `Delimiter` (parentheses), or `undefined` for a sequence. */
function delimited(args: readonly MathJson[]): MathJson | undefined {
  const inner = call(args[0]);
  if (inner?.head === 'Sequence') return inner.args.length === 1 ? inner.args[0] : undefined;
  return args[0];
}

function must<T>(value: T | undefined, why: string): T {
  if (value === undefined) throw new NotEvaluable(why);
  return value;
}

function exactCall(head: string, args: readonly MathJson[], budget: Budget): Rational {
  const at = (i: number) => exactNode(must(args[i], `${head} argument`), budget);
  const fold = (op: (a: Rational, b: Rational) => Rational | undefined, start: Rational) =>
    args.reduce<Rational>((acc, arg) => must(op(acc, exactNode(arg, budget)), `${head} too large`), start);
  switch (head) {
    case 'Add':
      return fold(Q.add, { num: 0n, den: 1n });
    case 'Multiply':
      return fold(Q.multiply, { num: 1n, den: 1n });
    case 'InvisibleOperator': {
      const mixed = mixedNumber(args);
      return mixed ? must(Q.add(...mixed), 'mixed') : fold(Q.multiply, { num: 1n, den: 1n });
    }
    case 'Negate':
      return Q.negate(at(0));
    case 'Subtract':
      return must(Q.add(at(0), Q.negate(at(1))), 'Subtract');
    case 'Divide':
    case 'Rational':
      return must(Q.multiply(at(0), must(Q.inverse(at(1)), 'division by zero')), 'Divide');
    case 'Power': {
      const [base, exponent] = [at(0), at(1)];
      if (Q.isInteger(exponent)) return must(Q.power(base, exponent), 'Power');
      const rooted = exponent.num === 1n ? Q.root(base, Number(exponent.den)) : undefined;
      return must(rooted, 'irrational power');
    }
    case 'Sqrt':
      return must(Q.root(at(0), 2), 'irrational root');
    case 'Root': {
      const degree = at(1);
      return must(Q.isInteger(degree) ? Q.root(at(0), Number(degree.num)) : undefined, 'irrational root');
    }
    case 'Factorial':
      return must(Q.factorial(at(0)), 'Factorial');
    case 'At':
    case 'Subscript':
      return must(baseNumeral(args), 'subscript');
    case 'Delimiter':
      return exactNode(must(delimited(args), 'sequence'), budget);
    default:
      throw new NotEvaluable(`no exact value for ${head}`);
  }
}

function exactNode(json: MathJson, budget: Budget): Rational {
  spend(budget);
  const node = call(json);
  return node ? exactCall(node.head, node.args, budget) : must(literal(json), 'not a number');
}

/** The exact rational value, or `undefined` when it is irrational, symbolic or over budget. */
export function exactValue(json: MathJson, budget: Budget): Rational | undefined {
  try {
    return exactNode(json, budget);
  } catch {
    return undefined;
  }
}

type Unary = (x: number) => number;
const UNARY: Readonly<Record<string, Unary>> = {
  Sqrt: Math.sqrt, Ln: Math.log, Lb: Math.log2, Abs: Math.abs,
  Sin: Math.sin, Cos: Math.cos, Tan: Math.tan, Arcsin: Math.asin, Arccos: Math.acos, Arctan: Math.atan,
  Sec: (x) => 1 / Math.cos(x), Csc: (x) => 1 / Math.sin(x), Cot: (x) => 1 / Math.tan(x),
  Sinh: Math.sinh, Cosh: Math.cosh, Tanh: Math.tanh, Degrees: (x) => (x * Math.PI) / 180,
};

function factorialFloat(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 170) throw new NotEvaluable('factorial out of range');
  let product = 1;
  for (let i = 2; i <= n; i++) product *= i;
  return product;
}

/** A product or quotient of non-zero factors that comes out 0 has underflowed: refuse it. */
function noUnderflow(result: number, factors: readonly number[]): number {
  if (result === 0 && factors.every((f) => f !== 0)) throw new NotEvaluable('underflow');
  return result;
}

function product(values: readonly number[]): number {
  return noUnderflow(values.reduce((a, b) => a * b, 1), values);
}

function floatCall(head: string, args: readonly MathJson[], point: ReadonlyMap<string, number>, budget: Budget): number {
  const values = () => args.map((arg) => floatNode(arg, point, budget));
  const at = (i: number) => floatNode(must(args[i], `${head} argument`), point, budget);
  switch (head) {
    case 'Add':
      return values().reduce((a, b) => a + b, 0);
    case 'Multiply':
      return product(values());
    case 'InvisibleOperator': {
      const mixed = mixedNumber(args);
      return mixed ? Q.toNumber(mixed[0]) + Q.toNumber(mixed[1]) : product(values());
    }
    case 'Negate':
      return -at(0);
    case 'Subtract':
      return at(0) - at(1);
    case 'Divide':
    case 'Rational': {
      const [num, den] = [at(0), at(1)];
      return noUnderflow(num / den, [num]);
    }
    case 'Power': {
      const [base, exponent] = [at(0), at(1)];
      return noUnderflow(base ** exponent, [base]);
    }
    case 'Root':
      return at(0) ** (1 / at(1));
    case 'Log':
      return args.length === 2 ? Math.log(at(0)) / Math.log(at(1)) : Math.log10(at(0));
    case 'Factorial':
      return factorialFloat(at(0));
    case 'Exp':
      return noUnderflow(Math.exp(at(0)), [1]);
    case 'PlusMinus':
      // Reached only after both sides were checked to carry the same ± signs.
      return args.length === 2 ? at(0) + at(1) : at(0);
    case 'Delimiter':
      return floatNode(must(delimited(args), 'sequence'), point, budget);
    case 'At':
    case 'Subscript': {
      const numeral = baseNumeral(args);
      return numeral ? Q.toNumber(numeral) : must(point.get(must(subscriptName(args), 'subscript')), 'unbound subscript');
    }
    default:
      if (head in UNARY && args.length === 1) return UNARY[head](at(0));
      throw new NotEvaluable(`no float value for ${head}`);
  }
}

function floatLeaf(json: MathJson, point: ReadonlyMap<string, number>): number {
  const exact = literal(json);
  if (exact) return Q.toNumber(exact);
  const name = must(leaf(json), 'unknown leaf');
  if (typeof name === 'string' && name in CONSTANTS) return CONSTANTS[name];
  return must(typeof name === 'string' ? point.get(name) : undefined, `unbound symbol ${name}`);
}

function floatNode(json: MathJson, point: ReadonlyMap<string, number>, budget: Budget): number {
  spend(budget);
  const node = call(json);
  const value = node ? floatCall(node.head, node.args, point, budget) : floatLeaf(json, point);
  // Overflow, underflow to infinity or NaN would make unequal values look equal: refuse them.
  if (!Number.isFinite(value)) throw new NotEvaluable('not finite');
  return value;
}

/** The float value at `point`, or `undefined` when not evaluable, non-finite or over budget. */
export function floatValue(json: MathJson, point: ReadonlyMap<string, number>, budget: Budget): number | undefined {
  try {
    return floatNode(json, point, budget);
  } catch {
    return undefined;
  }
}

/** Free variables of the tree, sorted (subscripted symbols count as one). */
export function freeVariables(json: MathJson): string[] {
  const names = new Set<string>();
  walk(json, (node) => {
    const sub = call(node);
    if (sub?.head === 'At' || sub?.head === 'Subscript') {
      const name = subscriptName(sub.args);
      if (name) names.add(name);
      return;
    }
    const value = leaf(node);
    if (typeof value === 'string' && isVariable(value)) names.add(value);
  });
  return [...names].sort();
}

/** ±∞ when the whole expression is an infinity symbol (possibly negated), else `undefined`. */
export function infinityOf(json: MathJson): number | undefined {
  const node = call(json);
  if (node?.head === 'Negate' && node.args.length === 1) {
    const inner = infinityOf(node.args[0]);
    return inner === undefined ? undefined : -inner;
  }
  const name = leaf(json);
  return typeof name === 'string' ? INFINITIES[name] : undefined;
}
