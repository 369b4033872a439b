// The option schemas (lib/options/schema.ts) and the one validator (checkOptions, beside the schema): the
// defaults, key lists and checks every option object derives from them, with lib/validate.ts's codes.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
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
import { assembleRankRewards } from '../lib/batch/rank-rewards.js';
import { completionMask } from '../lib/batch/completion-mask.js';
import { respondentVarianceShare } from '../lib/eval/diagnostics.js';
import { stepsToTarget } from '../lib/eval/curves.js';
import { buildReport } from '../lib/eval/report.js';
import { trainBpe } from '../lib/policy/bpe-train.js';
import { policyStep, type TrainablePolicy } from '../lib/policy/policy.js';

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

describe('the option objects converted from hand-written key lists', () => {
  const curve = [{ step: 0, value: 0 }, { step: 10, value: 1 }];
  // A policy whose training calls record what they were given (no model needed to check the options).
  const recording = (seen: object[]): TrainablePolicy => ({
    forward: async (_batch, options) => (seen.push({ forward: options }), { scores: { logp: [], entropy: [] }, handle: {} as never }),
    backward: async () => undefined,
    optimizerStep: async (options) => (seen.push({ optimizerStep: options }), { gradNorm: 0, learningRate: 0, step: 1 }),
  });
  const zeroLoss = () => ({ loss: 0, gradLogp: [] });

  it('reject unknown keys with a suggestion (GRPO_UNKNOWN_OPTION)', async () => {
    expect(() => trainBpe(['ab'], { vocabsize: 300 } as never)).toThrow('Option "vocabsize" of trainBpe is unknown; did you mean "vocabSize"?');
    expect(() => stepsToTarget(curve, curve, 5, { beter: 'lower' } as never)).toThrow('Option "beter" of stepsToTarget options is unknown; did you mean "better"?');
    expect(() => completionMask(new Int32Array(2), { rows: 1, eosTokenId: 2, eos: 1 } as never)).toThrow('Option "eos" of completionMask is unknown');
    expect(() => assembleRankRewards([[1]], { rank: 2 } as never)).toThrow('Option "rank" of assembleRankRewards is unknown; did you mean "ranks"?');
    expect(() => respondentVarianceShare([], 2, 1, { seeds: 1 } as never)).toThrow('Option "seeds" of variance share options is unknown; did you mean "seed"?');
    await expect(buildReport({ title: 't', runs: [{ name: 'a' }] } as never, { digit: 2 } as never)).rejects.toThrow('Option "digit" of report options is unknown; did you mean "digits"?');
    await expect(policyStep(recording([]), { prompts: [], completions: [] }, zeroLoss, { temprature: 1 } as never))
      .rejects.toMatchObject({ code: 'GRPO_UNKNOWN_OPTION', message: 'Option "temprature" of step options is unknown; did you mean "temperature"?' });
  });

  it('check types and ranges, including what the key lists let through', async () => {
    expect(() => trainBpe(['ab'], { specialTokens: ['<s>', 3] as never })).toThrow('Expected a string for trainBpe specialTokens[1]');
    expect(() => trainBpe(['ab'], { vocabSize: 257, specialTokens: ['<a>', '<b>'] })).toThrow('Expected trainBpe vocabSize >= 258 but received 257');
    expect(() => stepsToTarget(curve, curve, 5, { better: 'up' as never })).toThrow(/better/);
    expect(() => assembleRankRewards([[1]], { ranks: 0 })).toThrow(expect.objectContaining({ code: 'GRPO_VALUE_RANGE' }));
    expect(() => completionMask(new Int32Array(2), { eosTokenId: 2 } as never)).toThrow(/completionMask rows/);
    await expect(buildReport({ title: 't', runs: [{ name: 'a' }] } as never, { bootstrap: { level: 2 } })).rejects.toThrow('bootstrap.level');
    await expect(policyStep(recording([]), { prompts: [], completions: [] }, zeroLoss, { learningRate: -1 }))
      .rejects.toMatchObject({ code: 'GRPO_VALUE_RANGE', message: expect.stringContaining('step learningRate') });
  });

  it('step hands the scoring options to forward and the learning rate to optimizerStep', async () => {
    const seen: object[] = [];
    await policyStep(recording(seen), { prompts: [], completions: [] }, zeroLoss, { temperature: 0.7, learningRate: 0.01, onProgress: () => undefined });
    expect(seen).toEqual([{ forward: { temperature: 0.7 } }, { optimizerStep: { learningRate: 0.01 } }]);
  });
});

/** Every `.ts` file under `dir`, as paths relative to the repository. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [relative('.', path)] : [];
  });
}

// The input objects of these kernels are arrays and a shape, not options: their key checks stay by hand.
const INPUT_OBJECT_CHECKS = [
  'lib/kernels/loss.ts: knownKeys(`${FN} input`',
  'lib/kernels/token-advantages.ts: knownKeys(`${FN} input`',
  'lib/kernels/kl-loss.ts: knownKeys(`${FN} input`',
];

describe('no hand-written option key lists', () => {
  it('calls knownKeys outside lib/validate.ts and lib/options/ only for the named input objects', () => {
    const calls = sourceFiles('lib')
      .filter((file) => file !== join('lib', 'validate.ts') && !file.startsWith(join('lib', 'options') + '/'))
      .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/knownKeys\((`[^`]*`|'[^']*'|[^,)]*)/g)]
        .map((m) => `${file.split('\\').join('/')}: ${m[0]}`));
    expect(calls.filter((call) => !INPUT_OBJECT_CHECKS.includes(call))).toEqual([]);
    expect(calls.sort()).toEqual([...INPUT_OBJECT_CHECKS].sort());
  });
});
