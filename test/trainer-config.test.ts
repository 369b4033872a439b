// Trainer config: frozen documented defaults, recipe presets, layered overrides, and errors that name
// the key (with a suggestion for typos) and the expected type.
import { describe, expect, it } from 'vitest';
import { mergeConfig, setPath, TRAINER_DEFAULTS } from '../lib/trainer/config.js';
import { RECIPES, recipeOf, resolveConfig } from '../lib/trainer/recipes.js';

describe('defaults and recipes', () => {
  it('the defaults are deeply frozen and at paper scale (G 48 × S 8, K 20)', () => {
    expect(Object.isFrozen(TRAINER_DEFAULTS)).toBe(true);
    expect(Object.isFrozen(TRAINER_DEFAULTS.generation)).toBe(true);
    expect([TRAINER_DEFAULTS.groups, TRAINER_DEFAULTS.candidates, TRAINER_DEFAULTS.rewards.ranks]).toEqual([48, 8, 20]);
    expect([TRAINER_DEFAULTS.validation.every, TRAINER_DEFAULTS.steps, TRAINER_DEFAULTS.validation.patience]).toEqual([250, 2000, 1500]);
  });

  it('each recipe sets its sampler unit, reward target, truncation policy and loss preset', () => {
    expect([RECIPES['rank-grpo'].unit, RECIPES['rank-grpo'].target]).toEqual(['rows', 'respondent']);
    expect([RECIPES.remark.unit, RECIPES.remark.target]).toEqual(['requests', 'union']);
    expect(RECIPES['remark-mean'].target).toBe('mean');
    const rank = resolveConfig({ recipe: 'rank-grpo' });
    expect(rank.loss).toMatchObject({ isLevel: 'item', epsilonLow: 0.06, epsilonHigh: 0.08, beta: 1e-3, aggregation: 'localTokenMean' });
    expect(resolveConfig({ recipe: 'remark' }).loss).toEqual(rank.loss);
    const ccr = resolveConfig({ recipe: 'ccr' });
    const grpo = resolveConfig({ recipe: 'grpo' });
    expect([ccr.rewards.problems, ccr.advantages.truncation, ccr.validation.metric]).toEqual([3, 'dropSuffix', 'accuracy']);
    expect([grpo.rewards.problems, grpo.advantages.truncation]).toEqual([1, 'keep']);
    expect(grpo.generation.maxNewTokens / grpo.rewards.problems).toBeGreaterThan(ccr.generation.maxNewTokens / ccr.rewards.problems);
  });

  it('later layers win field by field; the recipe comes from the last layer naming one', () => {
    const c = resolveConfig({ recipe: 'ccr', generation: { temperature: 0.7 } }, { recipe: 'grpo', steps: 5, loss: { beta: 0.01 } });
    expect(c.recipe).toBe('grpo');
    expect(c.steps).toBe(5);
    expect(c.generation).toEqual({ ...TRAINER_DEFAULTS.generation, maxNewTokens: 96, temperature: 0.7 });
    expect(c.loss.beta).toBe(0.01);
    expect(() => recipeOf('remarks')).toThrow(/Unknown recipe "remarks"; expected one of rank-grpo, remark/);
  });
});

describe('errors name the key and what was expected', () => {
  const bad = (layer: unknown) => () => resolveConfig(layer as never);
  it('unknown keys, at any depth, with a suggestion', () => {
    expect(bad({ stpes: 3 })).toThrow(/Option "stpes" of the config is unknown; did you mean "steps"\?/);
    expect(bad({ generation: { maxNewToken: 3 } })).toThrow(/"maxNewToken" of config "generation" is unknown; did you mean "maxNewTokens"/);
    expect(bad({ loss: { epsilon: 0.2 } })).toThrow(expect.objectContaining({ code: 'GRPO_UNKNOWN_OPTION' }));
  });

  it('wrong types, choices and ranges', () => {
    expect(bad({ steps: '10' })).toThrow('Expected an integer for config "steps" but received "10"');
    expect(bad({ steps: 1.5 })).toThrow('Expected an integer for config "steps" but received 1.5');
    expect(bad({ candidates: 1 })).toThrow('Expected config "candidates" >= 2 but received 1');
    expect(bad({ advantages: { scale: 'rows' } })).toThrow('Expected config "advantages.scale" to be one of "group", "batch", "none"');
    expect(bad({ generation: 3 })).toThrow('Expected an object for config "generation" but received 3');
    expect(bad({ learningRate: -1 })).toThrow('Expected config "learningRate" to be finite and >= 0 but received -1');
    expect(bad({ loss: { epsilonLow: -1 } })).toThrow(expect.objectContaining({ code: 'GRPO_VALUE_RANGE' }));
  });

  it('mergeConfig needs a selection metric', () => {
    expect(() => mergeConfig(TRAINER_DEFAULTS)).toThrow('config "validation.metric": expected a metric name');
  });
});

describe('flag overrides', () => {
  it('setPath reads JSON values and keeps bare words as strings', () => {
    const target: Record<string, unknown> = {};
    setPath(target, 'generation.maxNewTokens', '96');
    setPath(target, 'advantages.lengthShaping', 'false');
    setPath(target, 'recipe', 'ccr');
    expect(target).toEqual({ generation: { maxNewTokens: 96 }, advantages: { lengthShaping: false }, recipe: 'ccr' });
    expect(resolveConfig(target).generation.maxNewTokens).toBe(96);
  });
});
