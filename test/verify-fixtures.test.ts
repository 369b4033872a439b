import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { lastBoxed } from '../lib/text/boxed.js';
import { normalizeAnswer, verifyAnswer, VERIFY_DEFAULTS } from '../lib/rewards/verify/index.js';

type Expected = 'correct' | 'incorrect' | 'unparsable';

/** [name, given, truth, expected] — the documented cases of peer-landscape.md §E.2/§E.3. */
const FALSE_POSITIVES: [string, string, string, Expected][] = [
  ['MV#14 tiny values: 1/2004! vs 1/2006! (too large to evaluate exactly: undecided, never correct)', '\\frac{1}{2004!}', '\\frac{1}{2006!}', 'unparsable'],
  ['MV#14 tiny values: 1/2^{99} vs 1/2^{98}', '\\frac{1}{2^{99}}', '\\frac{1}{2^{98}}', 'incorrect'],
  ['MV#14 n=2,3,4 vs n=1,2,3', 'n=2,3,4', 'n=1,2,3', 'incorrect'],
  ['MV#14 D=(0,1) vs D=(0,1.5)', 'D=(0,1)', 'D=(0,1.5)', 'incorrect'],
  ['MV#14 \\pm 2021 vs 2021', '\\pm 2021', '2021', 'incorrect'],
  ['MV#14 2021 vs \\pm 2021', '2021', '\\pm 2021', 'incorrect'],
  ['MV#14 12:00 vs 1:00 (times are not parsed: undecided)', '12:00', '1:00', 'unparsable'],
  ['MV#14/#82 1-1/e vs 1+1/e', '1-\\frac{1}{e}', '1+\\frac{1}{e}', 'incorrect'],
  ['MV#60 equations that both reduce to 0', '3x-y+13=0', '3x+4y+14=0', 'incorrect'],
  ['MV#41 invalid LaTeX 4\\sqrt(2) vs 4 (no number pulled out of a failed parse)', '4\\sqrt(2)', '4', 'unparsable'],
  ['percent×100: 500 vs 5%', '500', '5\\%', 'incorrect'],
  ['percent/100: 0.05 vs 5%', '0.05', '5\\%', 'incorrect'],
  ['Qwen ref×100: 500 vs 5', '500', '5', 'incorrect'],
  ['no tolerance on integer answers: 5.0001 vs 5', '5.0001', '5', 'incorrect'],
  ['no tolerance on integer answers: 4.9999999999 vs 5', '4.9999999999', '5', 'incorrect'],
  ['no tolerance on integer answers: 2sin(pi/2) vs 2', '2\\sin(\\frac{\\pi}{2})', '2', 'incorrect'],
  ['decimal approximations of a fraction are not the fraction', '0.333', '\\frac{1}{3}', 'incorrect'],
  ['a more precise decimal is not a rounded decimal reference', '3.1416', '3.14', 'incorrect'],
  ['different words', 'Eveyln', 'Evelyn', 'incorrect'],
  ['ordered tuples keep their order', '(1,2)', '(2,1)', 'incorrect'],
  ['closed vs half-open interval', '[1,2]', '[1,2)', 'incorrect'],
  ['huge powers are never compared as floats', '10^{10^{10}}', '10^{10^{11}}', 'unparsable'],
  ['underflow never makes two values equal', '\\pi \\cdot 10^{-400}', '\\pi \\cdot 10^{-401}', 'unparsable'],
  ['two boxed answers concatenated are not one answer', '840,840', '840', 'incorrect'],
];

const FALSE_NEGATIVES_FIXED: [string, string, string, Expected][] = [
  ['MV#37 \\text{13} vs 13', '\\text{13}', '13', 'correct'],
  ['MV#76 markdown **73**', '**73**', '73', 'correct'],
  ['NeMo-Gym#1790 \\text{E} vs E', '\\text{E}', 'E', 'correct'],
  ['maxtext#4150 literal \\boxed{42}', '\\boxed{42}', '42', 'correct'],
  ['(C) vs C', '\\text{(C)}', 'C', 'correct'],
];

const NORMALISER: [string, string, string, Expected][] = [
  ['\\dfrac and \\tfrac', '\\dfrac{3}{4}', '\\tfrac34', 'correct'],
  ['\\frac with unbraced arguments', '\\frac9{19}', '\\frac{9}{19}', 'correct'],
  ['\\left( \\right)', '\\left( 3, \\frac{\\pi}{2} \\right)', '(3,\\frac{\\pi}{2})', 'correct'],
  ['degrees', '30^\\circ', '30', 'correct'],
  ['dollars', '\\$18.90', '18.9', 'correct'],
  ['percent is a unit', '20\\%', '20', 'correct'],
  ['thousands separators', '1,000,000', '1000000', 'correct'],
  ['thousands separator with {,}', '10{,}080', '10080', 'correct'],
  ['trailing \\text unit', '5\\text{ cm}^2', '5', 'correct'],
  ['trailing words', '12 apples', '12', 'correct'],
  ['scale words', '3 million', '3000000', 'correct'],
  ['unicode minus', '−3', '-3', 'correct'],
  ['spacing commands', '2\\,\\sqrt{3}', '2\\sqrt{3}', 'correct'],
  ['math-mode wrappers', '$\\frac{1}{2}$', '\\frac12', 'correct'],
  ['trailing period', '7.', '7', 'correct'],
];

const EQUIVALENCE: [string, string, string, Expected][] = [
  ['fraction = decimal', '\\frac{1}{2}', '0.5', 'correct'],
  ['trailing zeros', '5.0', '5', 'correct'],
  ['scientific notation', '1.5\\times10^{3}', '1500', 'correct'],
  ['e-notation', '2.5e-3', '0.0025', 'correct'],
  ['mixed number', '2\\frac{1}{2}', '\\frac{5}{2}', 'correct'],
  ['plain slash fraction', '3/4', '\\frac{3}{4}', 'correct'],
  ['exact root', '\\sqrt{4}', '2', 'correct'],
  ['rationalised surd', '\\frac{\\sqrt{2}}{2}', '\\frac{1}{\\sqrt{2}}', 'correct'],
  ['pi expressions', '\\frac{\\pi}{2}', '\\frac\\pi2', 'correct'],
  ['decimal reference, irrational answer rounds to it', '\\pi', '3.14', 'correct'],
  ['decimal reference, fraction rounds to it', '\\frac13', '0.33', 'correct'],
  ['polynomial identity', 'x^2+2x+1', '(x+1)^2', 'correct'],
  ['reordered sum', '-q+p', 'p - q', 'correct'],
  ['different polynomial', 'x^2+2x', '(x+1)^2', 'incorrect'],
  ['sets ignore order', '\\{2,1\\}', '\\{1,2\\}', 'correct'],
  ['solution lists ignore order', '-2, 3', '3,-2', 'correct'],
  ['intervals', '(-\\infty, 3]', '(-\\infty,3]', 'correct'],
  ['union of intervals in another order', '(2,\\infty)\\cup(-\\infty,1)', '(-\\infty,1)\\cup(2,\\infty)', 'correct'],
  ['matrices', '\\begin{pmatrix} 1 \\\\ \\frac{1}{2} \\end{pmatrix}', '\\begin{pmatrix}1\\\\0.5\\end{pmatrix}', 'correct'],
  ['matrices differ', '\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}', '\\begin{pmatrix}1\\\\3\\end{pmatrix}', 'incorrect'],
  ['base-n numerals', '52_8', '42', 'correct'],
  ['subscripted variables', 'a_2+a_1', 'a_1+a_2', 'correct'],
  ['MV asymmetry: x = 5 answers 5', 'x = 5', '5', 'correct'],
  ['MV asymmetry: x = 2 + 99 = 101 answers 101', 'x = 2 + 99 = 101', '101', 'correct'],
  ['named reference k = 5 accepts 5', '5', 'k=5', 'correct'],
  ['x \\in [a,b] reference accepts the interval', '[-2,7]', 'x \\in [-2,7]', 'correct'],
  ['equations with swapped sides', '2x+1=y', 'y=2x+1', 'correct'],
  ['equations moved across the sign', 'y-2x=1', 'y=2x+1', 'correct'],
  ['complex numbers', '3i+6', '6+3i', 'correct'],
  ['complex conjugate differs', '6-3i', '6+3i', 'incorrect'],
  ['±√3 both sides', '\\pm\\sqrt{3}', '\\pm \\sqrt{3}', 'correct'],
];

const KNOWN_FALSE_NEGATIVES: [string, string, string, Expected][] = [
  ['Huang et al.: 45° vs π/4 (degrees are a unit here)', '45^\\circ', '\\frac{\\pi}{4}', 'incorrect'],
  ['Huang et al.: C_n^3 vs n(n-1)(n-2)/6', 'C_n^3', '\\frac{n(n-1)(n-2)}{6}', 'incorrect'],
  ['MV asymmetry: an interval does not answer an inequality reference', '(-\\infty, 3]', 'x \\le 3', 'incorrect'],
];

function table(name: string, rows: [string, string, string, Expected][]) {
  describe(name, () => {
    test.each(rows)('%s', (_label, given, truth, expected) => {
      expect(verifyAnswer(given, truth).verdict).toBe(expected);
    });
  });
}

table('§E.2 false positives of other verifiers are refused', FALSE_POSITIVES);
table('§E.2 false negatives of other verifiers are fixed', FALSE_NEGATIVES_FIXED);
table('§E.3 normalisation (verl strip_string / normalize_final_answer and more)', NORMALISER);
table('equivalence', EQUIVALENCE);
table('documented false negatives (precision first)', KNOWN_FALSE_NEGATIVES);

describe('extraction-side cases of §E.2', () => {
  test('MV#44: two identical boxes give one answer', () => {
    expect(verifyAnswer(lastBoxed('so \\boxed{840} and again \\boxed{840}.')!, '840').verdict).toBe('correct');
  });
  test('nested braces inside a box', () => {
    expect(lastBoxed('Thus $\\boxed{\\frac{\\sqrt{3}}{2}}$.')).toBe('\\frac{\\sqrt{3}}{2}');
  });
});

describe('total and bounded', () => {
  test('non-strings and empty strings are unparsable, never thrown', () => {
    expect(verifyAnswer(undefined, '3').verdict).toBe('unparsable');
    expect(verifyAnswer('3', 42 as unknown as string).verdict).toBe('unparsable');
    expect(verifyAnswer('', '3').verdict).toBe('unparsable');
    expect(verifyAnswer('3', '  ').verdict).toBe('unparsable');
  });

  test('answers longer than maxLength are decided by string equality only', () => {
    const long = `${'1+'.repeat(400)}1`;
    expect(verifyAnswer(long, long)).toEqual({ verdict: 'correct', method: 'string' });
    expect(verifyAnswer(long, '401')).toMatchObject({ verdict: 'unparsable', method: 'limit' });
  });

  test('nesting deeper than maxDepth is refused', () => {
    const deep = `${'('.repeat(60)}1${')'.repeat(60)}`;
    expect(verifyAnswer(deep, '2')).toMatchObject({ verdict: 'unparsable', method: 'limit' });
  });

  test('a tiny step budget makes a symbolic comparison unparsable, not wrong', () => {
    expect(verifyAnswer('x^2+2x+1', '(x+1)^2', { maxSteps: 5 }).verdict).toBe('unparsable');
  });

  test('an expression larger than maxNodes is unparsable', () => {
    expect(verifyAnswer('x^2+2x+1', '(x+1)^2', { maxNodes: 4 })).toMatchObject({ verdict: 'unparsable', method: 'latex' });
  });

  test('huge factorials and towers return quickly with a verdict', () => {
    for (const [g, t] of [['100000!', '99999!'], ['2^{2^{2^{2^{100}}}}', '3'], ['\\sqrt{\\sqrt{\\sqrt{10^{999}}}}', '7']]) {
      expect(['incorrect', 'unparsable']).toContain(verifyAnswer(g, t).verdict);
    }
  });

  test('unknown options are rejected with a suggestion', () => {
    expect(() => verifyAnswer('1', '1', { maxStep: 3 } as never)).toThrow(/did you mean "maxSteps"/);
    expect(VERIFY_DEFAULTS.relativeTolerance).toBe(1e-9);
  });

  test('property: never throws, verdict always one of three, and x against itself is never incorrect', () => {
    const latexish = fc.string({ unit: fc.constantFrom(...'0123456789+-*/^_{}()[],.=<>\\ abcxyzpi$%!|&'.split(''), '\\frac', '\\sqrt', '\\pi', '\\boxed{', '\\left(', '\\right)', '\\pm', '\\text{'), maxLength: 40 });
    fc.assert(
      fc.property(fc.oneof(latexish, fc.string()), fc.oneof(latexish, fc.string()), (a, b) => {
        const v = verifyAnswer(a, b);
        expect(['correct', 'incorrect', 'unparsable']).toContain(v.verdict);
        expect(verifyAnswer(a, a).verdict).not.toBe('incorrect');
      }),
      { seed: 6, numRuns: 400 },
    );
  });

  test('property: distinct integers never match, in any notation', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e6, max: 1e6 }), fc.integer({ min: -1e6, max: 1e6 }), (a, b) => {
        fc.pre(a !== b);
        expect(verifyAnswer(String(a), String(b)).verdict).toBe('incorrect');
        expect(verifyAnswer(`${a}.0`, String(b)).verdict).toBe('incorrect');
        expect(verifyAnswer(`\\frac{${2 * a}}{2}`, String(a)).verdict).toBe('correct');
      }),
      { seed: 7, numRuns: 200 },
    );
  });

  test('deterministic: the same verdict whatever was verified before', () => {
    const first = verifyAnswer('\\frac{\\sqrt{2}}{2}', '\\frac{1}{\\sqrt{2}}');
    for (let i = 0; i < 50; i++) verifyAnswer(`${i}x+1`, `x+${i}`);
    expect(verifyAnswer('\\frac{\\sqrt{2}}{2}', '\\frac{1}{\\sqrt{2}}')).toEqual(first);
  });

  test('normalizeAnswer is idempotent on the fixtures', () => {
    for (const [, given, truth] of [...NORMALISER, ...EQUIVALENCE]) {
      for (const s of [given, truth]) expect(normalizeAnswer(normalizeAnswer(s))).toBe(normalizeAnswer(s));
    }
  });
});
