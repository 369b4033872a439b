import { describe, expect, it } from 'vitest';
import { evaluateCcr } from '../lib/eval/ccr-metrics.js';
import { evaluateQa } from '../lib/eval/qa-metrics.js';
import { GrpoError } from '../lib/errors.js';

describe('QA metrics', () => {
  const record = { answers: [{ text: 'milk', count: 3 }, { text: 'eggs', count: 1 }, { text: 'bread', count: 2, aliases: ['a loaf'] }] };
  // "milk" twice (counted once), "cheese" unmatched, "A loaf" an alias of bread
  const text = '1. Milk\n2. milk\n3. cheese\n4. A loaf';

  it('count-weighted per-respondent recall and union recall at several K', () => {
    const at = (k: number) => evaluateQa([text], [record], k);
    expect([at(10).countRecall, at(10).unionRecall]).toEqual([5 / 6, 2 / 3]);
    expect([at(3).countRecall, at(3).unionRecall]).toEqual([3 / 6, 1 / 3]);
    expect([at(1).countRecall, at(1).unionRecall]).toEqual([3 / 6, 1 / 3]);
  });

  it('averages over questions; an empty list scores 0; series feed the bootstrap', () => {
    const m = evaluateQa([text, ''], [record, record], 10);
    expect(m.countRecall).toBeCloseTo(5 / 12, 12);
    expect(Array.from(m.series.unionRecall.count)).toEqual([1, 1]);
    expect(() => evaluateQa([text], [record, record])).toThrow(/shape/);
    expect(() => evaluateQa([text], [record], 0)).toThrow(GrpoError);
  });
});

describe('CCR metrics', () => {
  const items = [
    { completion: 'Answer 1: \\boxed{4}', truths: ['4'], tokens: 10 },
    { completion: 'Answer 1: \\boxed{5}', truths: ['6'], tokens: 20 },
    // packed N = 3: answers 1 and 3 correct, answer 2 missing (cut at the cap)
    { completion: 'Answer 1: \\boxed{1/2}\nAnswer 3: \\boxed{9}\nAnswer 2: \\boxed{7', truths: ['0.5', '7', '9'], tokens: 60 },
  ];

  it('single-problem accuracy, per-position accuracy and completion length', () => {
    const m = evaluateCcr(items);
    expect(m.singleAccuracy).toBe(1 / 2);
    expect(m.accuracy).toBe(3 / 5);
    expect(m.positionAccuracy).toEqual([2 / 3, 0, 1]);
    expect(m.length).toBe(30);
    expect(m.lengthUnit).toBe('tokens');
    expect(Array.from(m.series.accuracy.count)).toEqual([1, 1, 3]);
  });

  it('lengths in characters without token counts; no single-problem prompts gives NaN', () => {
    const m = evaluateCcr(items.slice(2).map(({ completion, truths }) => ({ completion, truths })));
    expect(m.lengthUnit).toBe('characters');
    expect(m.length).toBe(items[2].completion.length);
    expect(Number.isNaN(m.singleAccuracy)).toBe(true);
    expect(() => evaluateCcr([{ completion: 'x', truths: [] }])).toThrow(GrpoError);
  });
});
