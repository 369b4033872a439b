// The trainer config checks its values with lib/validate.ts's checkers: a value out of range is
// GRPO_VALUE_RANGE and a wrong type GRPO_INVALID_ARGUMENT, worded exactly as every other option of the
// package (config.ts had its own wording and called both GRPO_INVALID_ARGUMENT before).
import { describe, expect, it } from 'vitest';
import { GrpoError } from '../lib/errors.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import * as check from '../lib/validate.js';

/** The GrpoError a call throws. */
function thrown(fn: () => unknown): GrpoError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(GrpoError);
    return error as GrpoError;
  }
  throw new Error('expected a GrpoError');
}

const configError = (layer: unknown) => thrown(() => resolveConfig(layer as never));

describe('trainer config errors = lib/validate.ts errors', () => {
  const cases: [string, unknown, () => unknown][] = [
    ['an integer below its minimum', { candidates: 1 }, () => check.integer('config "candidates"', 1, 2)],
    ['a nested integer below its minimum', { generation: { maxNewTokens: 0 } }, () => check.integer('config "generation.maxNewTokens"', 0, 1)],
    ['a negative number', { learningRate: -1e-6 }, () => check.number('config "learningRate"', -1e-6, (v) => v >= 0 && Number.isFinite(v), 'to be finite and >= 0')],
    ['an unknown choice', { rewards: { shape: 'dcg' } }, () => check.oneOf('config "rewards.shape"', 'dcg', ['hit', 'dcgTail'])],
    ['a string for a number', { groups: 'many' }, () => check.integer('config "groups"', 'many', 1)],
    ['a fraction for an integer', { steps: 2.5 }, () => check.integer('config "steps"', 2.5, 1)],
    ['a number for a boolean', { advantages: { lengthShaping: 1 } }, () => check.boolean('config "advantages.lengthShaping"', 1)],
    ['a number for a string', { data: { moviesDir: 3 } }, () => check.string('config "data.moviesDir"', 3)],
    ['a number for a section', { generation: 3 }, () => check.object('config "generation"', 3)],
  ];
  it.each(cases)('%s: same code and message', (_, layer, same) => {
    const fromConfig = configError(layer);
    const fromValidate = thrown(same);
    expect([fromConfig.code, fromConfig.message]).toEqual([fromValidate.code, fromValidate.message]);
  });

  it('range errors are GRPO_VALUE_RANGE, type errors GRPO_INVALID_ARGUMENT', () => {
    expect(configError({ candidates: 1 })).toMatchObject({ code: 'GRPO_VALUE_RANGE', message: 'Expected config "candidates" >= 2 but received 1' });
    expect(configError({ validation: { every: -1 } }).code).toBe('GRPO_VALUE_RANGE');
    expect(configError({ generation: { temperature: -0.5 } })).toMatchObject({
      code: 'GRPO_VALUE_RANGE', message: 'Expected config "generation.temperature" to be finite and > 0 but received -0.5',
    });
    expect(configError({ device: 'gpu' })).toMatchObject({ code: 'GRPO_VALUE_RANGE', message: 'Expected config "device" to be one of "cpu", "cuda", "auto" but received "gpu"' });
    expect(configError({ steps: '10' })).toMatchObject({ code: 'GRPO_INVALID_ARGUMENT', message: 'Expected an integer for config "steps" but received "10"' });
  });
});
