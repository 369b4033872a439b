// The CCR study's stepwise task: the questions and answers of generateArithmetic, working in a verbose or a concise
// style (the share drawn per seed), answers that the CCR reward verifies, and the style of each problem section of a
// completion recovered from its text.
import { describe, expect, it } from 'vitest';
import { generateArithmetic } from '../lib/data/arithmetic.js';
import { generateStepwise, isConciseWorking, workingStyles } from '../lib/data/stepwise.js';
import { GrpoError } from '../lib/errors.js';
import { ccrReferenceCompletion, ccrReward } from '../lib/rewards/ccr.js';

/** Evaluates every "a op b = c" of a text: returns the equations that are false. */
function falseEquations(text: string): string[] {
  const ops: Record<string, (a: number, b: number) => number> = { '+': (a, b) => a + b, '-': (a, b) => a - b, '*': (a, b) => a * b, '/': (a, b) => a / b };
  return [...text.matchAll(/(\d+) ([-+*/]) (\d+) = (\d+)/g)].filter((m) => ops[m[2]](+m[1], +m[3]) !== +m[4]).map((m) => m[0]);
}

describe('generateStepwise', () => {
  const problems = generateStepwise({ count: 2000, seed: 3, minSteps: 2, maxSteps: 6, conciseShare: 0.2 });

  it('keeps the questions and answers of generateArithmetic and rewrites only the working', () => {
    const plain = generateArithmetic({ count: 2000, seed: 3, minSteps: 2, maxSteps: 6 });
    expect(problems.map((p) => [p.question, p.answer, p.steps])).toEqual(plain.map((p) => [p.question, p.answer, p.steps]));
    expect(problems.map((p) => p.concise)).toEqual(plain.map((p) => p.solution));
    expect(problems[0].id).toBe('stepwise-3-0');
  });

  it('writes correct working that ends with the answer, and the CCR reward credits its reference completion', () => {
    for (const p of problems) {
      expect(falseEquations(p.solution)).toEqual([]);
      const lastStep = p.concise.split('. ').at(-1)!.replace(/\.$/, '');
      expect(lastStep.endsWith(`= ${p.answer}`)).toBe(true);
      expect(p.solution).toContain(lastStep);
      expect(ccrReward(ccrReferenceCompletion([p]), [p.answer]).accuracy).toBe(1);
    }
  });

  it('draws the concise style at the requested share and writes the verbose one several times longer', () => {
    const concise = problems.filter((p) => p.style === 'concise');
    expect(concise.length / problems.length).toBeGreaterThan(0.17);
    expect(concise.length / problems.length).toBeLessThan(0.23);
    for (const p of concise) expect(p.solution).toBe(p.concise);
    for (const p of problems.filter((q) => q.style === 'verbose')) {
      expect(p.solution.length).toBeGreaterThan(5 * p.concise.length);
      expect(p.solution).toMatch(new RegExp(`^We start with \\d+\\. There are ${p.steps} steps\\.`));
      expect(p.solution.endsWith(`so the result is ${p.answer}.`)).toBe(true);
      expect(p.solution.match(/We check it backwards/g)).toHaveLength(p.steps);
    }
    expect(generateStepwise({ count: 50, seed: 3, conciseShare: 0 }).every((p) => p.style === 'verbose')).toBe(true);
    expect(generateStepwise({ count: 50, seed: 3, conciseShare: 1 }).every((p) => p.style === 'concise')).toBe(true);
  });

  it('gives the same problems for the same seed and other styles for another', () => {
    expect(generateStepwise({ count: 50, seed: 3, minSteps: 2, maxSteps: 6, conciseShare: 0.2 })).toEqual(problems.slice(0, 50));
    const other = generateStepwise({ count: 200, seed: 4, minSteps: 2, maxSteps: 6, conciseShare: 0.2 });
    expect(other.map((p) => p.style)).not.toEqual(problems.slice(0, 200).map((p) => p.style));
  });

  it('refuses bad options with a typed error', () => {
    expect(() => generateStepwise({ count: -1 })).toThrow(GrpoError);
    expect(() => generateStepwise({ count: 2, minSteps: 5, maxSteps: 2 })).toThrow(/maxSteps/);
    for (const share of [-0.1, 1.5, Number.NaN]) expect(() => generateStepwise({ count: 2, conciseShare: share })).toThrow(/conciseShare/);
  });
});

describe('workingStyles', () => {
  const [verbose, concise] = [generateStepwise({ count: 1, seed: 5, conciseShare: 0 })[0], generateStepwise({ count: 1, seed: 5, conciseShare: 1 })[0]];

  it('recovers the style of each problem section of a reference completion, in order', () => {
    expect(workingStyles(ccrReferenceCompletion([verbose, concise, verbose]))).toEqual(['verbose', 'concise', 'verbose']);
    expect(workingStyles(ccrReferenceCompletion([concise]))).toEqual(['concise']);
    expect(isConciseWorking(concise.solution)).toBe(true);
    expect(isConciseWorking(verbose.solution)).toBe(false);
  });

  it('reads a section cut by the cap by how it starts, skips sections without working and counts none without labels', () => {
    const cut = ccrReferenceCompletion([concise, verbose]).slice(0, -40);
    expect(workingStyles(cut)).toEqual(['concise', 'verbose']);
    expect(workingStyles('Problem 1: Answer 1: \\boxed{3}\n\nProblem 2: 4 + 1 = 5.')).toEqual(['concise']);
    expect(workingStyles('7 + 5 = 12. Answer 1: \\boxed{12}')).toEqual([]);
    expect(workingStyles('Problem 1: 7 plus 5 is 12')).toEqual(['verbose']); // anything but a leading equation
  });
});
