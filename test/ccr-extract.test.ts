import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { extractAnswers } from '../lib/rewards/ccr.js';

const statuses = (text: string, n = 3, allowUnlabelled = false) => extractAnswers(text, n, { allowUnlabelled }).map((a) => a.status);
const answers = (text: string, n = 3) => extractAnswers(text, n).map((a) => a.answer);

describe('extractAnswers: label-keyed recovery', () => {
  test('nested braces and text after the box', () => {
    const text = 'First, … Answer 1: \\boxed{\\frac{a}{b+\\sqrt{2}}} because that is it.\nAnswer 2: \\boxed{\\{1, 2\\}}.';
    expect(answers(text, 2)).toEqual(['\\frac{a}{b+\\sqrt{2}}', '\\{1, 2\\}']);
  });

  test('answers given out of order are matched by label', () => {
    const text = 'Answer 3: \\boxed{30}\nAnswer 1: \\boxed{10}\nAnswer 2: \\boxed{20}';
    const got = extractAnswers(text, 3);
    expect(got.map((a) => a.answer)).toEqual(['10', '20', '30']);
    expect(got.map((a) => a.inOrder)).toEqual([true, true, false]);
  });

  test('a skipped answer does not shift the later ones', () => {
    const text = 'Answer 1: \\boxed{10}\n(problem 2 skipped)\nAnswer 3: \\boxed{30}';
    expect(answers(text)).toEqual(['10', undefined, '30']);
    expect(statuses(text)).toEqual(['correct-format', 'missing', 'correct-format']);
  });

  test('the same answer stated twice with different values is ambiguous', () => {
    const text = 'Answer 1: \\boxed{4}\nWait, recheck. Answer 1: \\boxed{5}\nAnswer 2: \\boxed{6}';
    const got = extractAnswers(text, 2);
    expect(got.map((a) => a.status)).toEqual(['ambiguous', 'correct-format']);
    expect(got[0].answer).toBeUndefined();
    expect(got[0].span).toEqual({ start: 0, end: text.indexOf('\nAnswer 2') });
  });

  test('the same value stated twice (whitespace aside) is one answer', () => {
    expect(statuses('Answer 1: \\boxed{x + 1} … Answer 1: \\boxed{x+1}', 1)).toEqual(['correct-format']);
  });

  test('an unfinished final box (truncated) is missing; earlier answers keep their credit', () => {
    const text = 'Answer 1: \\boxed{10}\nAnswer 2: \\boxed{20}\nAnswer 3: \\boxed{\\frac{3';
    const got = extractAnswers(text, 3);
    expect(got.map((a) => a.status)).toEqual(['correct-format', 'correct-format', 'missing']);
    expect(got[2].truncated).toBe(true);
    expect(got[2].span).toEqual({ start: text.lastIndexOf('Answer 3'), end: text.length });
  });

  test('a completion cut between the label and the box is truncated, not malformed', () => {
    for (const tail of ['Answer 3:', 'Answer 3: ', 'Answer 3: \\bo', 'Answer 3: $\\boxed']) {
      const got = extractAnswers(`Answer 1: \\boxed{1} ${tail}`, 3)[2];
      expect([got.status, got.truncated]).toEqual(['missing', true]);
    }
  });

  test('a label not followed by a box is malformed', () => {
    const got = extractAnswers('Answer 1: 42\nAnswer 2: \\boxed{7}', 2);
    expect(got.map((a) => a.status)).toEqual(['malformed', 'correct-format']);
    expect(got[0].malformedAt).toBe(0);
  });

  test('a box without braces and a lower-case label are not answers', () => {
    expect(statuses('Answer 1: \\boxed 5', 1)).toEqual(['malformed']);
    expect(statuses('answer 1: \\boxed{5}', 1)).toEqual(['missing']);
  });

  test('a malformed mention followed by a proper answer is recovered (and remembered)', () => {
    const text = 'I will write Answer 1: later.\nAnswer 1: \\boxed{3}';
    const got = extractAnswers(text, 1)[0];
    expect([got.status, got.answer, got.malformedAt]).toEqual(['correct-format', '3', text.indexOf('Answer')]);
  });

  test('accepted label forms: bold, math mode, double colon, no space', () => {
    const text = '**Answer 1:** $\\boxed{1}$\nAnswer 2:: \\boxed{2}\nAnswer3:\\boxed{3}\nAnswer 4: \\(\\boxed{4}\\)';
    expect(answers(text, 4)).toEqual(['1', '2', '3', '4']);
  });

  test('labels outside 1…N are ignored', () => {
    expect(answers('Answer 0: \\boxed{0} Answer 4: \\boxed{4} Answer 2: \\boxed{2}', 3)).toEqual([undefined, '2', undefined]);
  });

  test('\\boxed without labels: missing by default; the positional fallback is opt-in', () => {
    const text = 'So \\boxed{10}. Then \\boxed{20}.';
    expect(statuses(text)).toEqual(['missing', 'missing', 'missing']);
    const got = extractAnswers(text, 3, { allowUnlabelled: true });
    expect(got.map((a) => [a.status, a.answer, a.labelled])).toEqual([
      ['correct-format', '10', false],
      ['correct-format', '20', false],
      ['missing', undefined, false],
    ]);
  });

  test('fallback: repeated identical boxes count once; more distinct boxes than problems are ambiguous', () => {
    expect(extractAnswers('\\boxed{5} so \\boxed{5}', 1, { allowUnlabelled: true })[0].answer).toBe('5');
    expect(statuses('\\boxed{5} or \\boxed{6}', 1, true)).toEqual(['ambiguous']);
  });

  test('fallback stays off when any label is present', () => {
    expect(statuses('Answer 1: \\boxed{1} and \\boxed{2}', 2, true)).toEqual(['correct-format', 'missing']);
  });

  test('boxEnd is just after the closing brace of the last complete box for the label', () => {
    const text = 'Answer 1: \\boxed{1}, Answer 1: \\boxed{1}! tail';
    expect(extractAnswers(text, 1)[0].boxEnd).toBe(text.indexOf('!'));
  });
});

describe('extractAnswers: properties', () => {
  const pieces = fc.constantFrom('Answer ', '1', '2', '3', ':', '::', ' ', '\n', '\\boxed{', '{', '}', '\\{', '\\}', '\\frac', 'x', '$', '**', '\\');
  const texty = fc.oneof(fc.string({ maxLength: 200 }), fc.array(pieces, { maxLength: 60 }).map((p) => p.join('')));

  test('never throws on arbitrary text, and every span indexes the input', () => {
    fc.assert(
      fc.property(texty, fc.integer({ min: 1, max: 5 }), fc.boolean(), (text, n, allowUnlabelled) => {
        const got = extractAnswers(text, n, { allowUnlabelled });
        expect(got).toHaveLength(n);
        for (const a of got) {
          if (a.span) {
            expect(0 <= a.span.start && a.span.start <= a.span.end && a.span.end <= text.length).toBe(true);
          }
          expect(a.boxEnd).toBeLessThanOrEqual(text.length);
          if (a.status === 'correct-format') expect(text.slice(a.span!.start, a.span!.end)).toContain(a.answer);
        }
      }),
      { seed: 61, numRuns: 500 },
    );
  });

  test('inserting junk without labels between answers never changes what is recovered', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 999 }), { minLength: 1, maxLength: 4 }), fc.string({ maxLength: 30 }).filter((s) => !/Answer|\\|[{}]/.test(s)), (values, junk) => {
        const text = values.map((v, i) => `Answer ${i + 1}: \\boxed{${v}}`).join(junk);
        expect(answers(text, values.length)).toEqual(values.map(String));
      }),
      { seed: 62, numRuns: 200 },
    );
  });
});
