import { describe, expect, test } from 'vitest';
import { lastBoxed } from '../lib/text/boxed.js';
import { gsm8kFinalAnswer, parseGsm8k, parseMathDataset } from '../lib/data/math.js';
import { verifyAnswer } from '../lib/rewards/verify/index.js';
import { realDataText } from './helpers/real-data.js';

const math500 = parseMathDataset(realDataText('math500.jsonl'), 'math500.jsonl');
const gsm8k = parseGsm8k(realDataText('gsm8k-test.jsonl'), 'gsm8k-test.jsonl');

/** Verifies each problem's extracted answer against its reference; returns the rate and the failures. */
function rate<T>(rows: readonly T[], check: (row: T) => { ok: boolean; why: string }) {
  const failures = rows.map(check).filter((r) => !r.ok).map((r) => r.why);
  return { rate: 1 - failures.length / rows.length, failures };
}

describe('MATH-500: the last \\boxed{} of each reference solution against its `answer`', () => {
  test('has 500 problems, each with a solution containing a box', () => {
    expect(math500).toHaveLength(500);
    expect(math500.every((p) => p.solution !== undefined && lastBoxed(p.solution) !== undefined)).toBe(true);
  });

  test('full verifier: at least 98% correct (measured 500/500)', () => {
    const { rate: r, failures } = rate(math500, (p) => {
      const v = verifyAnswer(lastBoxed(p.solution!), p.answer);
      return { ok: v.verdict === 'correct', why: `${p.id}: ${JSON.stringify(lastBoxed(p.solution!))} → ${v.verdict} (${v.method}: ${v.detail ?? ''})` };
    });
    expect(failures).toEqual([]);
    expect(r).toBeGreaterThanOrEqual(0.98);
  });

  // The extracted boxes are byte-equal to the answers, so the line above is decided by string equality.
  // This run turns that shortcut off: every answer must be recognised by its structure and value.
  test('structural path alone (stringMatch: false): at least 98% correct (measured 500/500)', () => {
    const { rate: r, failures } = rate(math500, (p) => {
      const v = verifyAnswer(lastBoxed(p.solution!), p.answer, { stringMatch: false });
      return { ok: v.verdict === 'correct', why: `${p.id}: ${JSON.stringify(p.answer)} → ${v.verdict} (${v.method}: ${v.detail ?? ''})` };
    });
    expect(failures).toEqual([]);
    expect(r).toBeGreaterThanOrEqual(0.98);
  });

  test('precision on real answers: each answer against the next problem\'s matches only when the values are equal', () => {
    const matches = math500
      .map((p, i) => [p.answer, math500[(i + 1) % math500.length].answer] as const)
      .filter(([a, b]) => verifyAnswer(a, b).verdict === 'correct');
    // Hand-checked: the only neighbouring pairs judged equal are genuinely equal values.
    expect(matches).toEqual([['5', 'x=5'], ['7', '7'], ['3', '3']]);
  });
});

describe('MATH-500 answers as a labelled set (perturbed and rewritten references)', () => {
  test('precision: changing the last digit of a reference is refused (only unit exponents are ignored)', () => {
    const changed = math500.flatMap((p) => {
      const at = p.answer.search(/\d(?!.*\d)/s);
      if (at < 0) return [];
      const digit = (Number(p.answer[at]) + 1) % 10;
      return [[p.answer.slice(0, at) + digit + p.answer.slice(at + 1), p.answer] as const];
    });
    expect(changed.length).toBeGreaterThan(480);
    const accepted = changed.filter(([given, truth]) => verifyAnswer(given, truth).verdict === 'correct');
    // The only accepted changes are in the exponent of a trailing unit, which is dropped with the unit.
    expect(accepted).toEqual([
      ['864 \\mbox{ inches}^3', '864 \\mbox{ inches}^2'],
      ['15\\mbox{ cm}^3', '15\\mbox{ cm}^2'],
    ]);
  });

  test('recall: integers written as \\frac{2n}{2} and fractions scaled by 3 are recognised', () => {
    const variants = math500.flatMap((p) => {
      if (/^-?\d+$/.test(p.answer)) return [[`\\frac{${2 * Number(p.answer)}}{2}`, p.answer]];
      const f = /^\\frac\{(\d+)\}\{(\d+)\}$/.exec(p.answer);
      return f ? [[`\\frac{${3 * Number(f[1])}}{${3 * Number(f[2])}}`, p.answer]] : [];
    });
    expect(variants.length).toBeGreaterThan(300);
    expect(variants.filter(([given, truth]) => verifyAnswer(given, truth).verdict !== 'correct')).toEqual([]);
  });
});

describe('GSM8K test: the number after #### against the `answer` field (numeric path)', () => {
  test('1,319 problems, 100% correct by the numeric rule', () => {
    expect(gsm8k).toHaveLength(1319);
    const { failures } = rate(gsm8k, (p) => {
      const v = verifyAnswer(gsm8kFinalAnswer(p.solution!), p.answer, { stringMatch: false });
      return { ok: v.verdict === 'correct' && v.method === 'numeric', why: `${p.id}: ${v.verdict} ${v.method}` };
    });
    expect(failures).toEqual([]);
  });

  test('the raw "#### 1,234" text (thousands separators kept) verifies too', () => {
    const withCommas = gsm8k.filter((p) => /####\s*-?\d{1,3}(,\d{3})+/.test(p.solution!));
    expect(withCommas.length).toBeGreaterThan(0);
    for (const p of withCommas) {
      const raw = p.solution!.slice(p.solution!.lastIndexOf('####') + 4).trim();
      expect(verifyAnswer(raw, p.answer).verdict).toBe('correct');
    }
  });

  test('precision: an off-by-one answer is never accepted', () => {
    const accepted = gsm8k.filter((p) => verifyAnswer(String(Number(p.answer) + 1), p.answer).verdict !== 'incorrect');
    expect(accepted).toEqual([]);
  });
});
