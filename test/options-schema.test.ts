// The option schemas (lib/options/schema.ts) and the one validator (checkOptions, beside the schema): the
// defaults, key lists and checks every option object derives from them, with lib/validate.ts's codes.
import { describe, expect, it } from 'vitest';
import { groupAdvantagesSync, rankAdvantagesSync, ADVANTAGE_DEFAULTS } from '../lib/kernels/advantage.js';
import { klLossSync } from '../lib/kernels/kl-loss.js';
import { LOSS_DEFAULTS, resolveLossOptions } from '../lib/kernels/loss.js';
import { TOKEN_ADVANTAGE_DEFAULTS } from '../lib/kernels/token-advantages.js';
import { SAMPLING_DEFAULTS, SAMPLING_KEYS } from '../lib/kernels/sampling-params.js';
import * as opt from '../lib/options/schema.js';
import { packProblems } from '../lib/rewards/ccr-pack.js';
import { mergeConfig, TRAINER_DEFAULTS } from '../lib/trainer/config.js';
import { checkOptions } from '../lib/options/schema.js';

describe('defaults derived from the schemas', () => {
  it('keep the public values (the frozen objects of before the schemas)', () => {
    expect(LOSS_DEFAULTS).toEqual({
      lossType: 'clip', isLevel: 'token', epsilonLow: 0.2, epsilonHigh: null, delta: null, dualClipC: null, logRatioClamp: null,
      cispoCap: 5, sapoTauPos: 1, sapoTauNeg: 1.05, vespo: { kPos: 2, lambdaPos: 3, kNeg: 3, lambdaNeg: 2 }, numItems: null, beta: 0,
      klEstimator: 'k3', klClamp: 'none', klBiasCorrection: false, klK2Gradient: false, aggregation: 'globalTokenMean',
      tokenCount: null, sequenceCount: null, maxCompletionLength: null, lossScaleFactor: null, accumulationSteps: 1,
      emptyBatch: 'zero', topEntropyQuantile: 1,
    });
    expect(ADVANTAGE_DEFAULTS).toEqual({
      scale: 'group', stdEpsilon: 1e-4, singletonGroup: 'zero', nanRewards: 'exclude', groupSize: 8, objectives: 1, multiObjective: 'sumThenNormalize',
    });
    expect(TOKEN_ADVANTAGE_DEFAULTS).toEqual({ lengthShaping: { enabled: true, endOfList: 0.1, extraToken: -0.1, earlyStop: -0.1 }, truncation: 'keep' });
    expect(SAMPLING_DEFAULTS).toEqual({ seed: 0, step: 0, temperature: 1, topK: 0, topP: 1, minP: 0, repetitionPenalty: 1, presencePenalty: 0, frequencyPenalty: 0 });
    expect(SAMPLING_KEYS).toEqual([...Object.keys(SAMPLING_DEFAULTS), 'history', 'allow', 'deny']);
  });

  it('are deeply frozen', () => {
    expect(Object.isFrozen(LOSS_DEFAULTS.vespo)).toBe(true);
    expect(Object.isFrozen(TRAINER_DEFAULTS.advantages)).toBe(true);
    expect(Object.isFrozen(TOKEN_ADVANTAGE_DEFAULTS.lengthShaping)).toBe(true);
  });
});

describe('checkOptions', () => {
  const schema = {
    size: opt.integer(4, 'rows', 1),
    scale: opt.nullable(opt.number(undefined, 'scale', opt.POSITIVE)),
    inner: opt.nested({ on: opt.boolean(true, 'on'), rate: opt.number(0.5, 'rate', opt.UNIT) }, 'inner'),
  };
  const naming = opt.kernelNaming('demo');
  const run = (input: object | undefined) => checkOptions(schema, naming, input, opt.defaultsOf(schema));

  it('fills defaults, keeps null for a nullable option and merges a nested one field by field', () => {
    expect(run(undefined)).toEqual({ size: 4, scale: null, inner: { on: true, rate: 0.5 } });
    expect(run({ scale: 2, inner: { rate: 1 } })).toEqual({ size: 4, scale: 2, inner: { on: true, rate: 1 } });
    expect(run({ scale: null, size: undefined })).toEqual({ size: 4, scale: null, inner: { on: true, rate: 0.5 } });
  });

  it('names the option in the error, with lib/validate.ts codes', () => {
    expect(() => run({ sise: 3 })).toThrow(expect.objectContaining({ code: 'GRPO_UNKNOWN_OPTION', message: 'Option "sise" of demo is unknown; did you mean "size"?' }));
    expect(() => run({ inner: { rat: 1 } })).toThrow(expect.objectContaining({ code: 'GRPO_UNKNOWN_OPTION', message: 'Option "rat" of demo inner is unknown; did you mean "rate"?' }));
    expect(() => run({ size: 0 })).toThrow(expect.objectContaining({ code: 'GRPO_VALUE_RANGE', message: 'Expected demo size >= 1 but received 0' }));
    expect(() => run({ scale: '2' })).toThrow(expect.objectContaining({ code: 'GRPO_INVALID_ARGUMENT', message: 'Expected a number for demo scale but received "2"' }));
    expect(() => run({ inner: { rate: 2 } })).toThrow(expect.objectContaining({ code: 'GRPO_VALUE_RANGE', message: 'Expected demo inner.rate in [0, 1] but received 2' }));
    expect(() => run({ inner: 3 })).toThrow(expect.objectContaining({ code: 'GRPO_INVALID_ARGUMENT', message: 'Expected an object for demo inner but received 3' }));
  });

  it('checks a required option even when it is absent', () => {
    const rewards = new Float32Array(4);
    expect(() => rankAdvantagesSync(rewards, { ranks: 2 } as never)).toThrow('Expected an integer for rankAdvantages candidates but received undefined');
  });
});

describe('every option object validates through its schema', () => {
  it('kernels, rewards and the trainer config', () => {
    expect(() => resolveLossOptions({ vespo: { kPos: -1 } as never })).toThrow('Expected policyLoss vespo.kPos to be finite and >= 0 but received -1');
    expect(() => groupAdvantagesSync(new Float32Array(8), { multiObjective: 'sum' as never })).toThrow(expect.objectContaining({ code: 'GRPO_VALUE_RANGE' }));
    const input = { shape: [1, 2] as const, logp: new Float32Array(2), refLogp: new Float32Array(2), mask: new Uint8Array([1, 1]) };
    expect(() => klLossSync(input, { tokenCount: 0 })).toThrow('Expected klLoss tokenCount to be finite and > 0 but received 0');
    expect(() => packProblems(['1+1?'], { n: 1, template: 'x' as never })).toThrow('Expected template to be a function (questions) => string');
    expect(() => mergeConfig(TRAINER_DEFAULTS, { loss: 3 })).toThrow('Expected an object for config "loss" but received 3');
  });
});
