// What a loss function returns to policy.step is checked before the backward pass: a wrong array
// type names its dtype (it said "received 4", the length, before), a wrong count or length names both.
import { describe, expect, it } from 'vitest';
import { GrpoError } from '../lib/errors.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import type { LossFunction } from '../lib/policy/policy.js';
import { tinyConfig } from './helpers/trainer.js';

const batch = { prompts: [[1, 2], [3]], completions: [[4, 5, 6, 7], [8, 9]] };

async function stepError(gradLogp: unknown): Promise<GrpoError> {
  const policy = BuiltinPolicy.create(tinyConfig(32), { seed: 1 });
  const loss = (() => ({ loss: 0, gradLogp })) as unknown as LossFunction;
  const error = await policy.step(batch, loss).then(() => undefined, (e: unknown) => e);
  policy.dispose();
  expect(error).toBeInstanceOf(GrpoError);
  return error as GrpoError;
}

describe('policy.step checks the LossOutput', () => {
  it('a Float64Array per completion names the dtype', async () => {
    const error = await stepError([new Float64Array(4), new Float32Array(2)]);
    expect([error.code, error.message]).toEqual(['GRPO_INVALID_ARGUMENT', 'Expected Float32Array for loss gradLogp[0] but received Float64Array(4)']);
  });

  it('one Float64Array instead of an array of arrays names the dtype', async () => {
    const error = await stepError(new Float64Array(6));
    expect([error.code, error.message]).toEqual([
      'GRPO_INVALID_ARGUMENT', 'Expected loss gradLogp to be an Array of 2 Float32Arrays (one per completion) but received Float64Array(6)',
    ]);
  });

  it('a wrong count or length names what was expected', async () => {
    expect((await stepError([new Float32Array(4)])).message).toBe('Expected loss gradLogp to hold 2 arrays (one per completion) but received 1');
    const short = await stepError([new Float32Array(4), new Float32Array(3)]);
    expect([short.code, short.message]).toEqual(['GRPO_SHAPE_MISMATCH', 'Expected loss gradLogp[1] of shape [completions[1].length] = 2 elements but received 3']);
  });
});
