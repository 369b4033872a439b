// The bad-input suite: every mistake gives a GrpoError with its code, and the process lives on.
import { describe, expect, it } from 'vitest';
import { GrpoError, linearLogprobsSync, logprobs, logprobsBackwardSync, logprobsSync } from '../lib/index.js';
import { codeOf } from './helpers/errors.js';

const logits = new Float32Array([0, 1, 2, 3, 4, 5]); // [2, 3]
const targets = new Int32Array([0, 2]);

describe('logprobs rejects bad input with typed errors', () => {
  it.each([
    ['wrong logits type', () => logprobsSync(new Float64Array(6) as unknown as Float32Array, targets), 'GRPO_INVALID_ARGUMENT'],
    ['wrong targets type', () => logprobsSync(logits, [0, 1] as unknown as Int32Array), 'GRPO_INVALID_ARGUMENT'],
    ['length not a multiple of T', () => logprobsSync(new Float32Array(7), targets), 'GRPO_SHAPE_MISMATCH'],
    ['target out of range', () => logprobsSync(logits, new Int32Array([0, 3])), 'GRPO_INDEX_RANGE'],
    ['negative target', () => logprobsSync(logits, new Int32Array([-1, 0])), 'GRPO_INDEX_RANGE'],
    ['zero temperature', () => logprobsSync(logits, targets, { temperature: 0 }), 'GRPO_VALUE_RANGE'],
    ['NaN temperature', () => logprobsSync(logits, targets, { temperature: NaN }), 'GRPO_INVALID_ARGUMENT'],
    ['unknown option', () => logprobsSync(logits, targets, { temprature: 1 } as never), 'GRPO_UNKNOWN_OPTION'],
    ['NaN logit', () => logprobsSync(new Float32Array([0, NaN, 0, 0, 0, 0]), targets), 'GRPO_NON_FINITE'],
    ['+Infinity logit', () => logprobsSync(new Float32Array([0, 0, 0, 0, Infinity, 0]), targets), 'GRPO_NON_FINITE'],
    ['all -Infinity row', () => logprobsSync(new Float32Array([-Infinity, -Infinity, -Infinity, 0, 0, 0]), targets), 'GRPO_VALUE_RANGE'],
    ['gradLogp length', () => logprobsBackwardSync(logits, targets, new Float32Array(3)), 'GRPO_SHAPE_MISMATCH'],
    ['NaN gradLogp', () => logprobsBackwardSync(logits, targets, new Float32Array([NaN, 0])), 'GRPO_NON_FINITE'],
    ['out buffer length', () => logprobsBackwardSync(logits, targets, new Float32Array(2), { out: new Float32Array(5) }), 'GRPO_SHAPE_MISMATCH'],
    ['hidden not [T, H]', () => linearLogprobsSync(new Float32Array(5), new Float32Array(8), targets), 'GRPO_SHAPE_MISMATCH'],
    ['weight not [V, H]', () => linearLogprobsSync(new Float32Array(8), new Float32Array(9), targets), 'GRPO_SHAPE_MISMATCH'],
    ['NaN weight', () => linearLogprobsSync(new Float32Array(8), new Float32Array([1, 2, 3, NaN, 1, 2, 3, 4, 5, 6, 7, 8]), targets), 'GRPO_NON_FINITE'],
  ])('%s', (_name, call, code) => {
    expect(codeOf(call)).toBe(code);
  });

  it('a detached buffer is named, not read', () => {
    const detached = new Float32Array(6);
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    expect(codeOf(() => logprobsSync(detached, targets))).toBe('GRPO_DETACHED_BUFFER');
  });

  it('the error message names the argument and the row', () => {
    expect(() => logprobsSync(new Float32Array([0, 0, 0, 0, NaN, 0]), targets)).toThrow(/row 1/);
    expect(() => logprobsSync(logits, new Int32Array([0, 9]))).toThrow(/targets\[1\].*9/);
  });

  it('the Promise form rejects instead of throwing', async () => {
    await expect(logprobs(logits, new Int32Array([0, 3]))).rejects.toMatchObject({ code: 'GRPO_INDEX_RANGE' });
    await expect(logprobs(new Float32Array([0, NaN, 0, 0, 0, 0]), targets)).rejects.toMatchObject({ code: 'GRPO_NON_FINITE' });
  });

  it('the process is still alive and computing after all of the above', () => {
    expect(logprobsSync(logits, targets).logp.length).toBe(2);
  });
});
