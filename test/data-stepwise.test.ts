// The CCR study's stepwise task: the questions and answers of generateArithmetic, wordy working whose length
// varies with the steps and the drawn wording, answers that the CCR reward verifies, the same output per seed.
import { describe, expect, it } from 'vitest';
import { generateArithmetic } from '../lib/data/arithmetic.js';
import { generateStepwise } from '../lib/data/stepwise.js';
import { GrpoError } from '../lib/errors.js';
import { ccrReferenceCompletion, ccrReward } from '../lib/rewards/ccr.js';

/** Evaluates every "a op b = c" of a text: returns the equations that are false. */
function falseEquations(text: string): string[] {
  const ops: Record<string, (a: number, b: number) => number> = { '+': (a, b) => a + b, '-': (a, b) => a - b, '*': (a, b) => a * b, '/': (a, b) => a / b };
  return [...text.matchAll(/(\d+) ([-+*/]) (\d+) = (\d+)/g)].filter((m) => ops[m[2]](+m[1], +m[3]) !== +m[4]).map((m) => m[0]);
}

describe('generateStepwise', () => {
  const problems = generateStepwise({ count: 400, seed: 3, maxSteps: 6 });

  it('keeps the questions and answers of generateArithmetic and rewrites only the working', () => {
    const plain = generateArithmetic({ count: 400, seed: 3, maxSteps: 6 });
    expect(problems.map((p) => [p.question, p.answer, p.steps])).toEqual(plain.map((p) => [p.question, p.answer, p.steps]));
    expect(problems.map((p) => p.concise)).toEqual(plain.map((p) => p.solution));
    expect(problems[0].id).toBe('stepwise-3-0');
  });

  it('writes correct working that ends with the answer, and the CCR reward credits its reference completion', () => {
    for (const p of problems) {
      expect(falseEquations(p.solution)).toEqual([]);
      expect(p.solution.endsWith(`So the result is ${p.answer}.`)).toBe(true);
      const lastStep = p.concise.split('. ').at(-1)!.replace(/\.$/, '');
      expect(lastStep.endsWith(`= ${p.answer}`)).toBe(true);
      expect(p.solution).toContain(lastStep);
      expect(ccrReward(ccrReferenceCompletion([p]), [p.answer]).accuracy).toBe(1);
    }
  });

  it('is longer than needed, by a varying amount: wordings differ among problems with the same number of steps', () => {
    for (const p of problems) expect(p.solution.length).toBeGreaterThan(p.concise.length);
    const threeSteps = problems.filter((p) => p.steps === 3).map((p) => p.solution.length - p.concise.length);
    expect(new Set(threeSteps).size).toBeGreaterThan(10);
    const byWording = ['We check it:', /We (add|subtract|multiply by|divide by) \d+:/, /\. \d+ [-+*/] \d+ = \d+\./].map((w) =>
      problems.filter((p) => (typeof w === 'string' ? p.solution.includes(w) : w.test(p.solution))).length);
    for (const count of byWording) expect(count).toBeGreaterThan(0); // all three wordings occur
    const lengths = problems.map((p) => p.solution.length);
    expect(Math.max(...lengths)).toBeGreaterThan(3 * Math.min(...lengths));
  });

  it('gives the same problems for the same seed and other working for another', () => {
    expect(generateStepwise({ count: 50, seed: 3, maxSteps: 6 })).toEqual(problems.slice(0, 50));
    const other = generateStepwise({ count: 50, seed: 4, maxSteps: 6 });
    expect(other.map((p) => p.solution)).not.toEqual(problems.slice(0, 50).map((p) => p.solution));
  });

  it('refuses bad options with the generator\'s typed error', () => {
    expect(() => generateStepwise({ count: -1 })).toThrow(GrpoError);
    expect(() => generateStepwise({ count: 2, minSteps: 5, maxSteps: 2 })).toThrow(/maxSteps/);
  });
});
