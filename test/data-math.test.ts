import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ARITHMETIC_DEFAULTS, generateArithmetic } from '../lib/data/arithmetic.js';
import { gsm8kFinalAnswer, loadGsm8k, loadMathDataset, packGroups, parseGsm8k, parseMathDataset } from '../lib/data/math.js';
import { GrpoError } from '../lib/errors.js';
import { unpackRealData } from './helpers/real-data.js';

const dataDir = unpackRealData(['gsm8k-test.jsonl', 'math500.jsonl']);

describe('GSM8K loader', () => {
  test('reads the bundled test split', async () => {
    const problems = await loadGsm8k(join(dataDir, 'gsm8k-test.jsonl'));
    expect(problems).toHaveLength(1319);
    expect(problems[1]).toMatchObject({ id: 'gsm8k-test-0001', answer: '3' });
    expect(problems[1].question).toMatch(/^A robe takes 2 bolts/);
    expect(problems.every((p) => /^-?\d+$/.test(p.answer))).toBe(true);
  });

  test('accepts the original release format (worked solution with #### in `answer`)', () => {
    const [p] = parseGsm8k('{"question": "q?", "answer": "5 + 995 = 1000\\n#### 1,000"}');
    expect(p).toMatchObject({ id: 'gsm8k-1', answer: '1000', solution: '5 + 995 = 1000\n#### 1,000' });
    expect(gsm8kFinalAnswer('no marker')).toBeUndefined();
  });

  test('errors carry the source and line number', () => {
    const bad = '{"question": "a", "answer": "1"}\n\n{"question": "b", "answer": }\n';
    expect(() => parseGsm8k(bad, 'g.jsonl')).toThrow(/^g\.jsonl:3: invalid JSON/);
    expect(() => parseGsm8k('{"question": "a"}', 'g.jsonl')).toThrow(/g\.jsonl:1: field "answer": missing/);
    expect(() => parseGsm8k('{"question": "a", "answer": 3}', 'g.jsonl')).toThrow(/g\.jsonl:1: field "answer": expected a string/);
    expect(() => parseGsm8k('[1, 2]', 'g.jsonl')).toThrow(/g\.jsonl:1: field "record": expected an object but received an array/);
    try {
      parseGsm8k('{"question": 1, "answer": {}}', 'g.jsonl');
    } catch (error) {
      expect((error as GrpoError).code).toBe('GRPO_DATA_FORMAT');
    }
  });
});

describe('MATH-style loader', () => {
  test('reads MATH-500', async () => {
    const problems = await loadMathDataset(join(dataDir, 'math500.jsonl'));
    expect(problems).toHaveLength(500);
    expect(problems[0]).toMatchObject({ id: 'test/precalculus/807.json', answer: '\\left( 3, \\frac{\\pi}{2} \\right)', subject: 'Precalculus', level: 2 });
  });

  test('without an `answer`, the last \\boxed{} of the solution is the answer', () => {
    const [p] = parseMathDataset('{"problem": "p", "solution": "so \\\\boxed{1} then \\\\boxed{\\\\frac{1}{2}}."}', 'm.jsonl');
    expect(p.answer).toBe('\\frac{1}{2}');
    expect(() => parseMathDataset('{"problem": "p", "solution": "no box"}', 'm.jsonl')).toThrow(/m\.jsonl:1: field "answer": no "answer"/);
  });

  test('files on disk: line numbers count blank lines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grpo-math-'));
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, '{"problem": "a", "answer": "1"}\n\n\n{"problem": "b"}\n');
    await expect(loadMathDataset(file)).rejects.toThrow(/bad\.jsonl:4: /);
  });
});

describe('packGroups', () => {
  const items = Array.from({ length: 10 }, (_, i) => i);

  test('fixed order: consecutive groups of n; the partial group is dropped', () => {
    expect(packGroups(items)).toEqual([[0, 1, 2], [3, 4, 5], [6, 7, 8]]);
    expect(packGroups(items, { n: 1 })).toHaveLength(10);
  });

  test('shuffled: seeded, reproducible, a permutation of the problems', () => {
    const a = packGroups(items, { order: 'shuffled', seed: 3, n: 5 });
    expect(packGroups(items, { order: 'shuffled', seed: 3, n: 5 })).toEqual(a);
    expect(packGroups(items, { order: 'shuffled', seed: 4, n: 5 })).not.toEqual(a);
    expect(a.flat().sort((x, y) => x - y)).toEqual(items);
  });

  test('property: every group has n distinct problems from the input', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1, max: 7 }), fc.nat(), (count, n, seed) => {
        const groups = packGroups(Array.from({ length: count }, (_, i) => i), { n, seed, order: 'shuffled' });
        expect(groups).toHaveLength(Math.floor(count / n));
        expect(new Set(groups.flat()).size).toBe(groups.length * n);
      }),
      { seed: 21, numRuns: 100 },
    );
  });

  test('options are checked', () => {
    expect(() => packGroups(items, { order: 'random' as never })).toThrow(/order/);
    expect(() => packGroups(items, { n: 0 })).toThrow(/n in \[1, 100\]/);
  });
});

describe('arithmetic task', () => {
  test('seeded: same seed, same problems; another seed, other problems', () => {
    const a = generateArithmetic({ count: 20, seed: 1 });
    expect(generateArithmetic({ count: 20, seed: 1 })).toEqual(a);
    expect(generateArithmetic({ count: 20, seed: 2 })).not.toEqual(a);
  });

  /** Replays the question's operations to check the truth independently of the generator. */
  function replay(question: string): number {
    let value = Number(/^Start with (\d+)\./.exec(question)![1]);
    for (const [, verb, operand] of question.matchAll(/(Add|Subtract|Multiply by|Divide by) (\d+)\./g)) {
      const k = Number(operand);
      value = verb === 'Add' ? value + k : verb === 'Subtract' ? value - k : verb === 'Multiply by' ? value * k : value / k;
    }
    return value;
  }

  test('property: answers are exact integers in range, and solutions agree with them', () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 8 }), fc.constantFrom('concise', 'verbose'), (seed, maxSteps, style) => {
        for (const p of generateArithmetic({ count: 5, seed, maxSteps, style: style as 'concise' | 'verbose' })) {
          const value = replay(p.question);
          expect(Number.isInteger(value) && value >= 0 && value <= ARITHMETIC_DEFAULTS.maxValue).toBe(true);
          expect(p.answer).toBe(String(value));
          expect(p.steps).toBe([...p.question.matchAll(/(Add|Subtract|Multiply by|Divide by)/g)].length);
          expect(p.solution.match(/= (\d+)\.(?![\s\S]*=)/)![1]).toBe(p.answer);
        }
      }),
      { seed: 22, numRuns: 100 },
    );
  });

  test('solution length grows with difficulty, and verbose is longer than concise', () => {
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const length = (steps: number, style: 'concise' | 'verbose') =>
      mean(generateArithmetic({ count: 200, seed: 9, minSteps: steps, maxSteps: steps, style }).map((p) => p.solution.length));
    expect(length(1, 'concise')).toBeLessThan(length(3, 'concise'));
    expect(length(3, 'concise')).toBeLessThan(length(6, 'concise'));
    expect(length(3, 'concise')).toBeLessThan(length(3, 'verbose'));
  });

  test('the vocabulary is small and regular', () => {
    const words = new Set<string>();
    for (const style of ['concise', 'verbose'] as const) {
      for (const p of generateArithmetic({ count: 500, seed: 4, maxSteps: 6, style })) {
        for (const w of `${p.question} ${p.solution}`.split(/[\s.:?]+/)) if (!/^\d*$/.test(w)) words.add(w);
      }
    }
    expect([...words].sort()).toEqual(
      ['*', '+', '-', '/', '=', 'Add', 'Divide', 'Multiply', 'Start', 'Subtract', 'The', 'We', 'What', 'add', 'by', 'divide', 'is', 'multiply', 'result', 'start', 'subtract', 'the', 'with'],
    );
  });

  test('options are checked', () => {
    expect(() => generateArithmetic({ count: 1, minSteps: 3, maxSteps: 2 })).toThrow(/maxSteps/);
    expect(() => generateArithmetic({ count: 1, styl: 'verbose' } as never)).toThrow(/did you mean "style"/);
    expect(() => generateArithmetic(undefined as never)).toThrow(GrpoError);
  });
});
