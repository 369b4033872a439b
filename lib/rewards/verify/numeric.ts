import type { Verdict } from './verdict.js';
import { type Rational, add, equal, fromDecimalString, isInteger, multiply, power, rational, toNumber } from './rational.js';

/** A plain number read from a normalised answer, exactly. */
export interface NumericAnswer {
  readonly value: Rational;
  /** Digits after the decimal point as written ("3.50" → 2); 0 for integers and fractions. */
  readonly decimals: number;
}

const MATH_WORDS = new Set(['pi', 'e', 'i', 'sqrt', 'sin', 'cos', 'tan', 'log', 'ln', 'exp', 'inf', 'infty', 'infinity']);
const SCALE_WORDS: Readonly<Record<string, bigint>> = { thousand: 10n ** 3n, million: 10n ** 6n, billion: 10n ** 9n };

const DECIMAL = String.raw`[+-]?(?:\d+\.?\d*|\.\d+)`;
const SCIENTIFIC = new RegExp(String.raw`^(${DECIMAL})(?:(?:\\times ?|\\cdot ?|\*)10\^(?:\{([+-]?\d{1,4})\}|([+-]?\d)))$`);
const PLAIN = new RegExp(String.raw`^(${DECIMAL})(?:e([+-]?\d{1,4}))?$`, 'i');
const FRACTION = /^([+-]?)(?:(\d+)(?:\\frac\{(\d+)\}\{(\d+)\}|\\frac(\d)(\d)| (\d+)\/(\d+))|\\frac\{([+-]?\d+)\}\{(\d+)\}|\\frac(\d)(\d)|(\d+)\/(\d+))$/;

function decimalsOf(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

function parseScientific(text: string): NumericAnswer | undefined {
  const plain = PLAIN.exec(text);
  const sci = plain ? undefined : SCIENTIFIC.exec(text);
  const mantissaText = plain?.[1] ?? sci?.[1];
  if (mantissaText === undefined) return undefined;
  const mantissa = fromDecimalString(mantissaText);
  const exponent = Number(plain?.[2] ?? sci?.[2] ?? sci?.[3] ?? 0);
  const scale = power({ num: 10n, den: 1n }, { num: BigInt(exponent), den: 1n });
  const value = mantissa && scale && multiply(mantissa, scale);
  return value && { value, decimals: exponent === 0 ? decimalsOf(mantissaText) : 0 };
}

function parseFraction(text: string): NumericAnswer | undefined {
  const m = FRACTION.exec(text);
  if (!m) return undefined;
  const sign = m[1] === '-' ? -1n : 1n;
  const whole = m[2] === undefined ? 0n : BigInt(m[2]);
  const [num, den] = [m[3] ?? m[5] ?? m[7] ?? m[9] ?? m[11] ?? m[13], m[4] ?? m[6] ?? m[8] ?? m[10] ?? m[12] ?? m[14]];
  const part = rational(BigInt(num), BigInt(den));
  const value = part && add({ num: whole, den: 1n }, part);
  return value && { value: { num: sign * value.num, den: value.den }, decimals: 0 };
}

/** Splits off trailing unit words ("12 apples", "5 million") and applies scale words. */
function stripUnits(text: string): { number: string; scale: bigint } | undefined {
  // Each word ends at a dot, a space, "^" or the end, so a run of letters splits into words one way only (a
  // zero-width separator made the match exponential in the run's length: a sampled answer hung the trainer).
  const m = /^(.*?\d\.?)\s*((?:[A-Za-z]+(?:\.\s*|\s+|(?=\^)|$))+)(?:\^\{?[23]\}?)?$/.exec(text);
  if (!m) return { number: text, scale: 1n };
  const words = m[2].trim().toLowerCase().split(/[\s.]+/).filter(Boolean);
  if (words.some((w) => MATH_WORDS.has(w)) || words[0].length < 2) return undefined;
  return { number: m[1], scale: SCALE_WORDS[words[0]] ?? 1n };
}

/**
 * Reads a normalised answer as one exact number: integers, signs, decimals, scientific notation
 * (`1.5e3`, `1.5\times10^{3}`), fractions (`3/4`, `\frac{3}{4}`), mixed numbers (`2\frac{1}{2}`),
 * and trailing unit words (`12 apples`, `5 million`). Returns `undefined` for anything else.
 */
export function parseNumeric(normalized: string): NumericAnswer | undefined {
  const parts = stripUnits(normalized);
  if (!parts) return undefined;
  const parsed = parseScientific(parts.number) ?? parseFraction(parts.number);
  if (!parsed || parts.scale === 1n) return parsed;
  const value = multiply(parsed.value, { num: parts.scale, den: 1n });
  return value && { value, decimals: 0 };
}

/** True when the rational has a finite decimal expansion (denominator 2^a·5^b). */
function terminates(value: Rational): boolean {
  let den = value.den;
  for (const p of [2n, 5n]) while (den % p === 0n) den /= p;
  return den === 1n;
}

/**
 * Exact comparison, precision-first: equal rationals only. The one tolerance: a reference written
 * with d decimals accepts an answer with no finite decimal expansion (1/3, √2, π) that rounds to it
 * at d decimals. Integer references never get a tolerance.
 */
export function rationalsMatch(given: Rational, truth: Rational, truthDecimals: number): boolean {
  if (equal(given, truth)) return true;
  if (truthDecimals === 0 || isInteger(truth) || terminates(given)) return false;
  return roundsTo(toNumber(given), toNumber(truth), truthDecimals);
}

/** Whether `value` rounded to `decimals` places equals `truth` (half a unit in the last place). */
export function roundsTo(value: number, truth: number, decimals: number): boolean {
  const halfUnit = 0.5 * 10 ** -decimals;
  return Number.isFinite(value) && Math.abs(value - truth) < halfUnit * (1 - 1e-9);
}

/** The verdict when both normalised strings are plain numbers, else `undefined`. */
export function compareNumericText(given: string, truth: string): Verdict | undefined {
  const [g, t] = [parseNumeric(given), parseNumeric(truth)];
  if (!g || !t) return undefined;
  return { verdict: rationalsMatch(g.value, t.value, t.decimals) ? 'correct' : 'incorrect', method: 'numeric' };
}
