// The TS ↔ native boundary is named, not positional: every options object given straight to the raw addon is read
// field by field into its C struct (native/addon/napi_util.h, Fields). For each family an unknown key is
// GRPO_UNKNOWN_OPTION and a missing or mistyped key GRPO_INVALID_ARGUMENT, each naming the field; since every key
// is reported missing when it is left out, every key is read. The loss options are also checked per field against
// the float64 reference (lib/reference/loss.ts): each field changes the result the way the reference says it does,
// so no two fields are swapped on the way to C.
import { describe, expect, it } from 'vitest';
import { native, type NativeBinding, type NativeLossOptions, type NativeSamplingParams } from '../lib/binding/index.js';
import { fromNativeError, GrpoError } from '../lib/errors.js';
import { policyLossSync, resolveLossOptions, type PolicyLossInput, type PolicyLossOptions } from '../lib/kernels/loss.js';
import { configToNative } from '../lib/policy/config.js';
import { ropeScalingToNative } from '../lib/policy/rope-scaling.js';
import { policyLossReference } from '../lib/reference/loss.js';
import { expectClose } from './helpers/close.js';
import { randomInts, randomNormal } from './helpers/random.js';
import { tinyConfig } from './helpers/trainer.js';

type Options = Record<string, unknown>;

const addon: NativeBinding = native();

/** [code, message] of the GrpoError the raw call throws, or undefined. */
function rawError(call: () => unknown): [string, string] | undefined {
  try {
    call();
  } catch (error) {
    const typed = fromNativeError(error);
    expect(typed).toBeInstanceOf(GrpoError);
    return [(typed as GrpoError).code, (typed as GrpoError).message];
  }
  return undefined;
}

/** A value of another type than `value`, which the glue must refuse. */
function mistyped(value: unknown): unknown {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return 1;
  if (typeof value === 'string') return 'notAChoice';
  return 'notAnArray'; // typed arrays, null and nested objects
}

/** The checks every options object of the boundary passes; `call` hands `options` to the raw addon. */
function expectNamedFields(prefix: string, valid: Options, call: (options: Options) => unknown): void {
  expect(rawError(() => call(valid))).toBeUndefined();
  expect(rawError(() => call({ ...valid, misspelt: 1 }))).toEqual(['GRPO_UNKNOWN_OPTION', `${prefix} has an unknown field "misspelt"`]);
  for (const key of Object.keys(valid)) {
    const { [key]: _, ...missing } = valid;
    expect(rawError(() => call(missing)), key).toEqual(['GRPO_INVALID_ARGUMENT', `${prefix}.${key} is missing`]);
    const wrong = rawError(() => call({ ...valid, [key]: mistyped(valid[key]) }));
    expect(wrong?.[0], key).toBe('GRPO_INVALID_ARGUMENT');
    expect(wrong?.[1], key).toMatch(new RegExp(`^${prefix}\\.${key} (must be|is not a typed array)`));
  }
}

const B = 4, T = 6;
const mask = Uint8Array.from({ length: B * T }, (_, i) => (i % 7 === 5 ? 0 : 1)); // [B, T]
const logp = Float32Array.from(randomNormal(B * T, 0.5, 1), (x) => x - 1); // [B, T]
const oldNoise = randomNormal(B * T, 0.3, 2), refNoise = randomNormal(B * T, 0.4, 3); // [B, T]
const lossInput: PolicyLossInput = {
  shape: [B, T],
  logp,
  oldLogp: Float32Array.from(logp, (x, i) => x + oldNoise[i]),
  // row 0 far from the reference, so that the KL clamps bite
  refLogp: Float32Array.from(logp, (x, i) => x + (i < T ? 12 : refNoise[i])),
  advantages: Float32Array.of(1.2, -0.8, 0.5, -1.5), // [B]
  mask,
  segments: Int32Array.from(randomInts(B * T, 4, 4)), // [B, T] items 0..3
  entropy: Float32Array.from(randomNormal(B * T, 1, 5), Math.abs),
};

const LOSS_DEFAULTS_NATIVE: NativeLossOptions = {
  lossType: 'clip', epsilonLow: 0.2, epsilonHigh: 0.2, delta: 0, dualClipC: 0, logRatioClamp: 0, cispoCap: 5, sapoTauPos: 1,
  sapoTauNeg: 1.05, vespo: { kPos: 2, lambdaPos: 3, kNeg: 3, lambdaNeg: 2 }, isLevel: 'token', numItems: 0, beta: 0, klEstimator: 'k3',
  klClamp: 'none', klBiasCorrection: false, klK2Gradient: false, aggregation: 'globalTokenMean', emptyBatch: 'zero', tokenCount: 0,
  sequenceCount: 0, maxCompletionLength: 0, lossScaleFactor: 0, accumulationSteps: 1, topEntropyQuantile: 1,
};

function rawLoss(options: Options) {
  const grad = new Float32Array(B * T);
  return addon.policyLoss(lossInput.logp, null, null, lossInput.advantages, mask, null, null, T, options as unknown as NativeLossOptions, grad, false);
}

const SAMPLING: NativeSamplingParams = {
  temperature: null, topK: null, topP: null, minP: null, repetitionPenalty: null, presencePenalty: null, frequencyPenalty: null,
  allow: null, history: null, historyOffsets: null, seedLo: 7, seedHi: 0, stepLo: 0, stepHi: 0, firstRow: 0,
};

describe('raw options objects are read by field name', () => {
  it('policyLoss options (and the nested vespo) and its stats object', () => {
    expectNamedFields('options', LOSS_DEFAULTS_NATIVE as unknown as Options, rawLoss);
    expectNamedFields('options.vespo', LOSS_DEFAULTS_NATIVE.vespo, (vespo) => rawLoss({ ...LOSS_DEFAULTS_NATIVE, vespo }));
    expect(Object.keys(rawLoss(LOSS_DEFAULTS_NATIVE as unknown as Options) as object)).toEqual([
      'loss', 'policyLoss', 'kl', 'clipRatioLow', 'clipRatioHigh', 'clipRatioRegion', 'dualClipRatio', 'ratioMean', 'ratioMin',
      'ratioMax', 'entropy', 'ppoKl', 'tokens', 'phiSeqMean',
    ]);
  });

  it('advantage options (group and rank-wise), length shaping and truncation', () => {
    const rewards = Float32Array.of(1, 0, 0.5, 0.25);
    const normalize = { scale: 'group', singletonGroup: 'zero', nanRewards: 'exclude', stdEpsilon: 1e-4 };
    const out = new Float32Array(4);
    const group = (o: Options) => addon.groupAdvantages(rewards, 2, null, 2, o as never, out, false);
    expectNamedFields('options', normalize, group);
    expectNamedFields('options', normalize, (o) => addon.rankAdvantages(rewards, 1, 2, 2, o as never, out, false));
    expect(Object.keys(group(normalize) as object)).toEqual(['rewardMean', 'rewardStd', 'fracRewardZeroStd']);
    const tokens = new Float32Array(2 * 3);
    const shaping = { enabled: true, endOfList: 0.1, extraToken: -0.1, earlyStop: -0.1 };
    expectNamedFields('shaping', shaping, (s) => addon.scatterItemAdvantages(Float32Array.of(1, 2, 3, 4), Int32Array.of(0, 1, -1, 0, 1, 2),
      new Uint8Array(6).fill(1), Int32Array.of(2, -1), 3, 2, s as never, tokens, false));
    expectNamedFields('options', { truncation: 'keep' }, (o) => addon.broadcastAdvantages(Float32Array.of(1, 2), new Uint8Array(6).fill(1),
      null, null, 3, o as never, tokens, new Uint8Array(6), false));
  });

  it('logprob and fused linear logprob options', () => {
    const logits = randomNormal(3 * 5, 1, 6), targets = Int32Array.of(0, 4, -100);
    expectNamedFields('options', { temperature: 0.7, ignoreIndex: -100 },
      (o) => addon.logprobForward(logits, targets, 5, o as never, new Float32Array(3), null, null, false));
    expectNamedFields('options', { temperature: 0.7, ignoreIndex: -100 },
      (o) => addon.logprobBackward(logits, targets, 5, o as never, new Float32Array(3), null, new Float32Array(15), false));
    const hidden = randomNormal(3 * 2, 1, 7), weight = randomNormal(5 * 2, 1, 8);
    expectNamedFields('options', { temperature: 1, ignoreIndex: -100, chunkRows: 2, chunkVocab: 3 },
      (o) => addon.linearLogprobForward(hidden, weight, null, targets, 2, o as never, new Float32Array(3), null, null, false));
  });

  it('the GEMM layout', () => {
    const layout = { transA: false, transB: true, m: 2, n: 3, k: 4, alpha: 1, beta: 0, lda: 4, ldb: 4, ldc: 3 };
    expectNamedFields('layout', layout, (l) => addon.gemm(randomNormal(8, 1, 9), randomNormal(12, 1, 10), new Float32Array(6), l as never, false));
  });

  it('sampler settings, the same object for sample and modelGenerate (in its grpo_generate_options)', () => {
    const settings = SAMPLING as unknown as Options;
    expectNamedFields('sampling', settings, (s) => addon.sample(randomNormal(2 * 8, 1, 11), 8, s as never, new Int32Array(2), null, null, false));
    const config = configToNative(tinyConfig(16));
    const model = addon.modelCreate(config);
    addon.modelInit(model, 1, false);
    const generate = (o: Options) => addon.modelGenerate(model, Int32Array.of(1, 2), Float64Array.of(0, 2), o as never,
      new Int32Array(2), new Float32Array(2), new Float64Array(1), new Uint8Array(1), false);
    const options = { maxNewTokens: 2, stopTokens: new Int32Array(0), sampling: settings };
    expectNamedFields('options', options, generate);
    expectNamedFields('options.sampling', settings, (sampling) => generate({ ...options, sampling }));
    addon.modelDispose(model);
  });

  it('model config, score and AdamW options', () => {
    const config = configToNative(tinyConfig(16)) as unknown as Options;
    expectNamedFields('config', config, (c) => addon.modelDispose(addon.modelCreate(c as never)));
    const yarn = ropeScalingToNative({ type: 'yarn', factor: 4, originalMaxPositions: 8, betaFast: 32, betaSlow: 1, truncate: true }) as unknown as Options;
    expectNamedFields('config.ropeScaling', yarn, (r) => addon.modelDispose(addon.modelCreate({ ...config, ropeScaling: r } as never)));
    const model = addon.modelCreate(config as never);
    addon.modelInit(model, 1, false);
    const tokens = Int32Array.of(1, 2, 3), offsets = Float64Array.of(0, 3), targets = Int32Array.of(2, 3, -100);
    expectNamedFields('options', { temperature: 1, ignoreIndex: -100 },
      (o) => addon.modelScore(model, tokens, offsets, targets, o as never, true, new Float32Array(3), null, false));
    addon.modelBackward(model, new Float32Array(3).fill(0.1), null, false);
    expectNamedFields('options', { lr: 0, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 },
      (o) => addon.modelAdamw(model, o as never, new Float32Array(1), false));
    addon.modelDispose(model);
  });

  it('a native status arrives as its GrpoErrorCode, sync and async', async () => {
    const grad = new Float32Array(B * T);
    const call = (async: boolean) => addon.policyLoss(Float32Array.of(NaN, 0), null, null, Float32Array.of(1), Uint8Array.of(1, 1), null, null, 2,
      LOSS_DEFAULTS_NATIVE, grad.subarray(0, 2), async);
    expect(rawError(() => call(false))?.[0]).toBe('GRPO_NON_FINITE');
    const rejected = await (call(true) as Promise<unknown>).then(() => undefined, (e: unknown) => fromNativeError(e));
    expect(rejected).toMatchObject({ code: 'GRPO_NON_FINITE' });
    expect(rawError(() => addon.policyLoss(logp, null, null, lossInput.advantages, mask.subarray(1), null, null, T, LOSS_DEFAULTS_NATIVE,
      grad, false))?.[0]).toBe('GRPO_SHAPE_MISMATCH');
  });
});

/** One loss option at two values (`with`: what makes it matter), both checked against the reference. */
interface FieldCase {
  field: keyof PolicyLossOptions;
  a: unknown;
  b: unknown;
  with?: PolicyLossOptions;
}

const VESPO = { kPos: 2, lambdaPos: 3, kNeg: 3, lambdaNeg: 2 };
const FIELD_CASES: FieldCase[] = [
  { field: 'lossType', a: 'clip', b: 'gpg' },
  { field: 'isLevel', a: 'token', b: 'sequence' },
  { field: 'epsilonLow', a: 0.1, b: 0.3 },
  { field: 'epsilonHigh', a: 0.05, b: 0.3 },
  { field: 'delta', a: 1.05, b: 1.3 },
  { field: 'dualClipC', a: 1.05, b: 3 },
  { field: 'logRatioClamp', a: 0.05, b: 0.5 },
  { field: 'cispoCap', a: 1.05, b: 1.3, with: { lossType: 'cispoCap' } },
  { field: 'sapoTauPos', a: 1, b: 3, with: { lossType: 'sapo' } },
  { field: 'sapoTauNeg', a: 1.05, b: 3, with: { lossType: 'sapo' } },
  ...(['kPos', 'lambdaPos', 'kNeg', 'lambdaNeg'] as const).map((k): FieldCase =>
    ({ field: 'vespo', a: VESPO, b: { ...VESPO, [k]: VESPO[k] + 1.5 }, with: { lossType: 'vespo' } })),
  { field: 'numItems', a: 2, b: 4, with: { isLevel: 'item' } },
  { field: 'beta', a: 0.05, b: 0.2 },
  { field: 'klEstimator', a: 'k1', b: 'k3', with: { beta: 0.1 } },
  { field: 'klClamp', a: 'none', b: 'openrlhf', with: { beta: 0.1, klEstimator: 'k1' } },
  { field: 'klBiasCorrection', a: false, b: true, with: { beta: 0.1, klEstimator: 'k1' } }, // k3 of row 0 is ~e^12: float32 rounding
  { field: 'klK2Gradient', a: false, b: true, with: { beta: 0.1 } },
  { field: 'aggregation', a: 'globalTokenMean', b: 'seqMeanTokenMean' },
  { field: 'tokenCount', a: 10, b: 20 },
  { field: 'sequenceCount', a: 2, b: 6, with: { aggregation: 'seqMeanTokenMean' } },
  { field: 'maxCompletionLength', a: 6, b: 12, with: { aggregation: 'tokenSumOverBL' } },
  { field: 'lossScaleFactor', a: 3, b: 9, with: { aggregation: 'tokenSumOverL' } },
  { field: 'accumulationSteps', a: 1, b: 2, with: { aggregation: 'localTokenMean' } },
  { field: 'topEntropyQuantile', a: 1, b: 0.5 },
];

describe('every loss option reaches the kernel as the reference reads it', () => {
  for (const c of FIELD_CASES) {
    const label = c.field === 'vespo' ? `vespo ${JSON.stringify(c.b)}` : `${c.field}: ${String(c.a)} vs ${String(c.b)}`;
    it(label, () => {
      const results = [c.a, c.b].map((value) => {
        const options = { ...c.with, [c.field]: value } as PolicyLossOptions;
        const resolved = resolveLossOptions(options);
        const native = policyLossSync(lossInput, options);
        const reference = policyLossReference({ ...lossInput, rows: B, cols: T }, resolved, (resolved.numItems as number | null) ?? 4);
        expectClose([native.loss], [reference.loss], { atol: 1e-5, rtol: 1e-4 });
        expectClose(native.gradLogp, reference.grad, { atol: 1e-6, rtol: 1e-4 });
        return native;
      });
      expect(results[0].gradLogp).not.toEqual(results[1].gradLogp); // the field matters here
    });
  }

  it('emptyBatch: an empty mask gives loss 0 ("zero") or NaN ("nan")', () => {
    const empty = { ...lossInput, mask: new Uint8Array(B * T) };
    expect(policyLossSync(empty, { emptyBatch: 'zero' }).loss).toBe(0);
    expect(policyLossSync(empty, { emptyBatch: 'nan' }).loss).toBeNaN();
  });
});
