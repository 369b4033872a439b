import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { generateArithmetic } from '../lib/data/arithmetic.js';
import { GrpoError } from '../lib/errors.js';
import { ccrReferenceCompletion, ccrReward, ccrRewardBatch, CCR_DEFAULTS, informativeGroups, packProblems } from '../lib/rewards/ccr.js';

const TRUTHS = ['12', '\\frac{1}{2}', '7'];
const answer = (k: number, value: string) => `Working on problem ${k}…\nAnswer ${k}: \\boxed{${value}}\n`;

describe('ccrReward', () => {
  test('all correct, labelled, in order: accuracy 1, format 1, reward wAcc + wFmt = 3', () => {
    const r = ccrReward(answer(1, '12') + answer(2, '0.5') + answer(3, '7'), TRUTHS);
    expect([r.accuracy, r.format, r.reward]).toEqual([1, 1, 3]);
    expect(r.correct).toEqual([true, true, true]);
  });

  test('a truncated completion with two correct answers scores 2/3 accuracy', () => {
    const r = ccrReward(`${answer(1, '12')}${answer(2, '1/2')}Working on problem 3… the sum is 3 + 4 = `, TRUTHS);
    expect(r.accuracy).toBeCloseTo(2 / 3, 12);
    expect(r.correct).toEqual([true, true, false]);
    expect(r.answers[2].status).toBe('missing');
  });

  test('the denominator is N: omitting a hard problem never raises the average', () => {
    const attempted = ccrReward(answer(1, '12') + answer(2, '0.5') + answer(3, '8'), TRUTHS);
    const omitted = ccrReward(answer(1, '12') + answer(2, '0.5'), TRUTHS);
    expect(omitted.accuracy).toBeCloseTo(2 / 3, 12);
    expect(omitted.accuracy).toBe(attempted.accuracy);
    expect(ccrReward(answer(1, '12'), TRUTHS).accuracy).toBeCloseTo(1 / 3, 12);
  });

  test('property: removing any answer never increases accuracy or reward', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), fc.integer({ min: 0, max: 2 }), (rights, drop) => {
        const values = rights.map((ok, k) => (ok ? TRUTHS[k] : '999'));
        const full = ccrReward(values.map((v, k) => answer(k + 1, v)).join(''), TRUTHS);
        const fewer = ccrReward(values.map((v, k) => (k === drop ? '' : answer(k + 1, v))).join(''), TRUTHS);
        expect(fewer.accuracy).toBeLessThanOrEqual(full.accuracy);
        expect(fewer.reward).toBeLessThanOrEqual(full.reward);
      }),
      { seed: 11, numRuns: 100 },
    );
  });

  test('rewardPrefixEnd is just after the last recovered answer', () => {
    const prefix = answer(1, '12') + answer(2, '0.5');
    const text = `${prefix}Working on problem 3… Answer 3: \\boxed{\\frac{7`;
    expect(ccrReward(text, TRUTHS).rewardPrefixEnd).toBe(prefix.length - 1); // the trailing "\n" is not part of the box
    expect(ccrReward('no answers at all', TRUTHS).rewardPrefixEnd).toBe(0);
  });

  test('a skipped answer does not shift grades: answer 3 is graded against truth 3', () => {
    const r = ccrReward(answer(1, '12') + answer(3, '7'), TRUTHS);
    expect(r.correct).toEqual([true, false, true]);
  });

  test('an ambiguous answer gets no credit', () => {
    const r = ccrReward(answer(1, '12') + answer(1, '13') + answer(2, '0.5') + answer(3, '7'), TRUTHS);
    expect(r.correct).toEqual([false, true, true]);
    expect(r.format).toBeCloseTo(2 / 3, 12);
  });

  test('format: answers out of order lose format credit, not accuracy', () => {
    const r = ccrReward(answer(2, '0.5') + answer(1, '12') + answer(3, '7'), TRUTHS);
    expect(r.accuracy).toBe(1);
    expect(r.format).toBeCloseTo(2 / 3, 12); // answer 2 comes before answer 1
  });

  test('format: a malformed label inside the rewarded prefix costs that answer its format credit', () => {
    const r = ccrReward(`Answer 1: twelve\n${answer(1, '12')}${answer(2, '0.5')}${answer(3, '7')}`, TRUTHS);
    expect([r.accuracy, r.format]).toEqual([1, 2 / 3]);
  });

  test('a malformed suffix never removes credit from a correct prefix', () => {
    const prefix = answer(1, '12') + answer(2, '0.5');
    const clean = ccrReward(prefix, TRUTHS);
    for (const suffix of ['Answer 3: I think it is', 'Answer 3: \\boxed{', 'Answer 1: hmm', '}}}{{\\boxed{']) {
      const r = ccrReward(prefix + suffix, TRUTHS);
      expect([r.accuracy, r.format, r.reward]).toEqual([clean.accuracy, clean.format, clean.reward]);
    }
  });

  test('unlabelled boxes: no credit by default; the fallback gives accuracy but no format credit', () => {
    const text = 'So \\boxed{12}, then \\boxed{0.5}, and \\boxed{7}.';
    expect(ccrReward(text, TRUTHS).reward).toBe(0);
    const r = ccrReward(text, TRUTHS, { allowUnlabelled: true });
    expect([r.accuracy, r.format, r.reward]).toEqual([1, 0, 2]);
  });

  test('weights are options; the defaults are wAcc = 2, wFmt = 1', () => {
    expect(CCR_DEFAULTS).toMatchObject({ wAcc: 2, wFmt: 1 });
    const text = answer(1, '12') + answer(2, '3');
    const r = ccrReward(text, TRUTHS, { wAcc: 1, wFmt: 0 });
    expect(r.reward).toBeCloseTo(1 / 3, 12);
  });

  test('N = 1 is the plain GRPO baseline', () => {
    expect(ccrReward(answer(1, '42'), ['42']).reward).toBe(3);
  });

  test('errors name the argument', () => {
    expect(() => ccrReward('x', [])).toThrow(GrpoError);
    expect(() => ccrReward('x', ['1', 2 as unknown as string])).toThrow(/truths\[1\]/);
    expect(() => ccrReward(5 as unknown as string, ['1'])).toThrow(/completion/);
    expect(() => ccrReward('x', ['1'], { wacc: 2 } as never)).toThrow(/did you mean "wAcc"/);
    expect(() => ccrReward('x', ['1'], { wFmt: Number.NaN })).toThrow(/wFmt/);
  });
});

describe('packProblems', () => {
  const questions = ['What is 1+1?', 'What is 2*3?', 'What is 10-4?'];

  test('distinct labels and the Answer k instruction', () => {
    const prompt = packProblems(questions);
    for (const k of [1, 2, 3]) expect(prompt).toContain(`Problem ${k}: ${questions[k - 1]}`);
    expect(prompt).toContain('Answer k: \\boxed{');
    expect(prompt.match(/Problem \d+:/g)).toHaveLength(3);
  });

  test('N = 1 uses the same code', () => {
    expect(packProblems([{ question: 'What is 1+1?' }], { n: 1 })).toMatch(/Answer 1: \\boxed\{your answer\}[\s\S]*Problem 1: What is 1\+1\?$/);
  });

  test('the template is replaceable', () => {
    expect(packProblems(questions, { template: (qs) => qs.map((q, i) => `#${i + 1} ${q}`).join('|') })).toBe('#1 What is 1+1?|#2 What is 2*3?|#3 What is 10-4?');
  });

  test('the number of problems must equal n', () => {
    expect(() => packProblems(questions.slice(0, 2))).toThrow(/length n = 3/);
    expect(() => packProblems(['a', '', 'c'])).toThrow(/problems\[1\]/);
  });

  test('property: packing generated problems and answering every one correctly gives accuracy 1', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 1, max: 5 }), fc.constantFrom('concise', 'verbose'), (seed, n, style) => {
        const problems = generateArithmetic({ count: n, seed, style: style as 'concise' | 'verbose' });
        expect(packProblems(problems, { n })).toContain(`Problem ${n}:`);
        const r = ccrReward(ccrReferenceCompletion(problems), problems.map((p) => p.answer));
        expect([r.accuracy, r.format]).toEqual([1, 1]);
      }),
      { seed: 12, numRuns: 100 },
    );
  });

  test('property: cutting a correct completion anywhere keeps exactly the answers whose box closed', () => {
    const problems = generateArithmetic({ count: 3, seed: 5, minSteps: 2, style: 'verbose' });
    const full = ccrReferenceCompletion(problems);
    const truths = problems.map((p) => p.answer);
    const boxEnds = [...full.matchAll(/\\boxed\{\d+\}/g)].map((m) => m.index + m[0].length);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: full.length }), (cut) => {
        const r = ccrReward(full.slice(0, cut), truths);
        const closed = boxEnds.filter((end) => end <= cut).length;
        expect(r.accuracy).toBeCloseTo(closed / 3, 12);
        expect(r.rewardPrefixEnd).toBe(closed === 0 ? 0 : boxEnds[closed - 1]);
      }),
      { seed: 13, numRuns: 300 },
    );
  });
});

describe('informative groups', () => {
  test('a group is informative exactly when its accuracy advantages are not all zero', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 5 }), fc.infiniteStream(fc.nat()), (groups, size, n, draws) => {
        const counts = Int32Array.from({ length: groups * size }, () => draws.next().value % (n + 1));
        const { flags, count, fraction } = informativeGroups(counts, size);
        for (let g = 0; g < groups; g++) {
          const acc = Array.from(counts.subarray(g * size, g * size + size), (c) => c / n);
          const mean = acc.reduce((a, b) => a + b, 0) / size;
          const advantages = acc.map((a) => a - mean);
          expect(flags[g] === 1).toBe(advantages.some((a) => Math.abs(a) > 1e-12));
        }
        expect(count).toBe(flags.reduce((a, b) => a + b, 0));
        expect(fraction).toBeCloseTo(count / groups, 12);
      }),
      { seed: 14, numRuns: 200 },
    );
  });

  test('shape errors', () => {
    expect(() => informativeGroups([1, 2, 3], 2)).toThrow(/groupSize = 2/);
    expect(informativeGroups([], 4)).toEqual({ flags: new Uint8Array(0), count: 0, fraction: 0 });
  });
});

describe('ccrRewardBatch', () => {
  test('matches ccrReward per completion and flags informative prompts', () => {
    const truths = [TRUTHS, ['1', '2', '3']];
    const completions = [
      answer(1, '12') + answer(2, '0.5') + answer(3, '7'),
      answer(1, '12'),
      answer(1, '1') + answer(2, '2'),
      answer(1, '5') + answer(2, '2'),
    ];
    const out = ccrRewardBatch(completions, truths, 2);
    completions.forEach((c, i) => {
      const r = ccrReward(c, truths[Math.floor(i / 2)]);
      expect(out.rewards[i]).toBeCloseTo(r.reward, 6);
      expect(out.accuracy[i]).toBeCloseTo(r.accuracy, 6);
      expect(out.format[i]).toBeCloseTo(r.format, 6);
      expect(out.correctCounts[i]).toBe(r.correct.filter(Boolean).length);
      expect(out.rewardPrefixEnd[i]).toBe(r.rewardPrefixEnd);
    });
    expect(Array.from(out.informative)).toEqual([1, 1]);
    expect(out.unparsable).toBe(0);
  });

  test('counts undecidable answers instead of hiding them', () => {
    expect(ccrRewardBatch([answer(1, '4\\sqrt(2)')], [['4']], 1).unparsable).toBe(1);
  });

  test('shape mismatch', () => {
    expect(() => ccrRewardBatch(['a', 'b', 'c'], [TRUTHS], 2)).toThrow(/candidates=2/);
  });
});
