/**
 * Exact rationals on BigInt, with a size cap so that no answer can make the verifier slow:
 * an operation whose result would exceed `MAX_BITS` returns `undefined` instead.
 */
export interface Rational {
  readonly num: bigint;
  /** Always positive; gcd(num, den) = 1. */
  readonly den: bigint;
}

// 8192 bits holds 1000! (8,530 bits is just over: 1000! is refused, 900! is not) and keeps
// Euclid's gcd under a few ms; larger values fall back to float or `unparsable`.
export const MAX_BITS = 8192;

function bitLength(value: bigint): number {
  return (value < 0n ? -value : value).toString(16).length * 4;
}

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** Builds a reduced rational, or `undefined` for a zero denominator or an oversized value. */
export function rational(num: bigint, den = 1n): Rational | undefined {
  if (den === 0n) return undefined;
  if (bitLength(num) > MAX_BITS || bitLength(den) > MAX_BITS) return undefined;
  if (den < 0n) [num, den] = [-num, -den];
  const g = den === 1n ? 1n : gcd(num, den);
  return g > 1n ? { num: num / g, den: den / g } : { num, den };
}

export const add = (a: Rational, b: Rational) => rational(a.num * b.den + b.num * a.den, a.den * b.den);
export const multiply = (a: Rational, b: Rational) => rational(a.num * b.num, a.den * b.den);
export const negate = (a: Rational): Rational => ({ num: -a.num, den: a.den });
export const inverse = (a: Rational) => rational(a.den, a.num);
export const equal = (a: Rational, b: Rational) => a.num === b.num && a.den === b.den;
export const isInteger = (a: Rational) => a.den === 1n;

/** a^k for an integer k; refused when the result would pass MAX_BITS. */
export function power(base: Rational, exponent: Rational): Rational | undefined {
  if (!isInteger(exponent)) return undefined;
  const k = exponent.num < 0n ? -exponent.num : exponent.num;
  const bits = Math.max(bitLength(base.num), bitLength(base.den));
  if (bits > 1 && BigInt(bits - 1) * k > BigInt(MAX_BITS)) return undefined;
  const raised = rational(base.num ** k, base.den ** k);
  return raised && exponent.num < 0n ? inverse(raised) : raised;
}

function integerRoot(value: bigint, degree: number): bigint | undefined {
  if (value < 0n) return degree % 2 === 1 ? negateRoot(integerRoot(-value, degree)) : undefined;
  if (value < 2n) return value;
  // Newton's method from an upper bound; exact for perfect powers.
  let x = 1n << BigInt(Math.ceil(bitLength(value) / degree) + 1);
  const d = BigInt(degree);
  for (;;) {
    const next = ((d - 1n) * x + value / x ** (d - 1n)) / d;
    if (next >= x) break;
    x = next;
  }
  return x ** d === value ? x : undefined;
}

const negateRoot = (root: bigint | undefined) => (root === undefined ? undefined : -root);

/** The exact `degree`-th root when numerator and denominator are perfect powers, else `undefined`. */
export function root(value: Rational, degree: number): Rational | undefined {
  if (!Number.isInteger(degree) || degree < 1 || degree > 64) return undefined;
  const num = integerRoot(value.num, degree);
  const den = integerRoot(value.den, degree);
  return num === undefined || den === undefined ? undefined : rational(num, den);
}

/** n! for 0 ≤ n ≤ 900 (900! has 7,649 bits). */
export function factorial(value: Rational): Rational | undefined {
  if (!isInteger(value) || value.num < 0n || value.num > 900n) return undefined;
  let product = 1n;
  for (let i = 2n; i <= value.num; i++) product *= i;
  return { num: product, den: 1n };
}

/** Parses a plain decimal or integer string ("-12", "3.50", ".5") exactly. */
export function fromDecimalString(text: string): Rational | undefined {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d{1,4}))?$/i.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return undefined;
  const [, sign, whole, fraction = '', exponentText] = match;
  const exponent = Number(exponentText ?? 0) - fraction.length;
  if (Math.abs(exponent) > 2000) return undefined;
  const digits = BigInt(`${sign}${whole || '0'}${fraction}`);
  return exponent >= 0 ? rational(digits * 10n ** BigInt(exponent)) : rational(digits, 10n ** BigInt(-exponent));
}

/** Nearest float64 (good enough to compare rounded values; exact for small values). */
export function toNumber(value: Rational): number {
  const scale = Math.max(0, bitLength(value.den) - 1000, bitLength(value.num) - 1000);
  const shift = BigInt(scale);
  return Number(value.num >> shift) / Number(value.den >> shift);
}
