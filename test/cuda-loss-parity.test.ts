// The policy loss and the token advantages on the CUDA backend. Parity with the CPU runs wherever loadCuda()
// finds a usable GPU; elsewhere that suite is skipped with the printed reason (the one skip the project allows).
// The no-GPU path (device 'cuda' → GRPO_CUDA_UNAVAILABLE, 'auto' → the CPU's result) runs everywhere.
//
// Tolerances (docs/cuda.md): the GPU evaluates the same per-token terms (native/kernels/loss/loss_token.h) with the
// device's expf instead of the CPU's polynomial and with fused multiply-adds, so a ratio or KL term can differ by
// a few float ulps, and it sums in another (fixed) order. Gradients: 1e-5 of the largest |gradient| (the direct
// and routed parts of a token can cancel) plus 1e-4 relative. Loss: 1e-5·(1 + 4·Σ|gradient|), since each
// token's |ℓ| is at most about 4·|∂ℓ/∂logp| for these inputs (|logp| < 4), plus 1e-5 relative. Statistics:
// 1e-5 relative (clip fractions and counts are exact: the log-ratios are kept away from the clip bounds).
import { describe, expect, it, vi } from 'vitest';
import { loadCuda } from '../lib/binding/index.js';
import { GrpoError } from '../lib/errors.js';
import {
  AGGREGATIONS, IS_LEVELS, LOSS_TYPES, policyLoss, policyLossSync,
  type PolicyLossCallOptions, type PolicyLossInput, type PolicyLossResult,
} from '../lib/kernels/loss.js';
import { presets } from '../lib/kernels/presets.js';
import { tokenAdvantagesSync, type TokenAdvantageInput } from '../lib/kernels/token-advantages.js';
import { expectClose } from './helpers/close.js';
import { randomNormal, seededRandom } from './helpers/random.js';

const { binding: gpu, reason } = loadCuda();
if (!gpu) console.log(`CUDA loss parity tests skipped: ${reason}`);

// Ratio bounds of the options below (ε 0.2, δ 1.5, dual clip 3, CISPO cap 5, Rank-GRPO ε 0.06 / 0.08): log-ratios are
// kept 2e-3 away from them, so that a few-ulp difference in exp cannot move a token across a clip boundary.
const BOUNDS = [0.8, 1.2, 1.5, 3, 5, 0.94, 1.08].map(Math.log);

/** A loss input [rows, cols]; `spread` is the log-ratio scale (30: exp saturates and every clamp binds). */
function lossInput(rows: number, cols: number, spread: number, seed: number): Required<PolicyLossInput> {
  const n = rows * cols;
  const random = seededRandom(seed);
  const logp = randomNormal(n, 1, seed + 1).map((x) => -Math.abs(x) - 0.05); // [rows, cols]
  const ratios = randomNormal(n, spread, seed + 2).map((d) => (BOUNDS.some((b) => Math.abs(d - b) < 2e-3) ? d + 4e-3 : d));
  const mask = Uint8Array.from({ length: n }, (_, i) => (Math.floor(i / cols) !== 1 && random() < 0.8 ? 1 : 0)); // row 1 empty
  const input = {
    shape: [rows, cols] as const,
    logp,
    oldLogp: logp.map((x, i) => x - ratios[i]),
    refLogp: randomNormal(n, spread, seed + 3).map((x, i) => x + logp[i]),
    advantages: randomNormal(n, 1, seed + 4),
    mask,
    segments: Int32Array.from({ length: n }, (_, i) => (Math.floor((i % cols) / 7) % 6) - 1), // -1 … 4
    entropy: randomNormal(n, 1.5, seed + 5).map(Math.abs),
  };
  for (let i = 0; i < n; i++) if (!mask[i]) input.logp[i] = NaN; // masked-out padding is never read
  return input;
}

function expectLossParity(cuda: PolicyLossResult, cpu: PolicyLossResult): void {
  let largest = 0;
  let total = 0;
  for (const g of cpu.gradLogp) largest = Math.max(largest, Math.abs(g)), total += Math.abs(g);
  expectClose(cuda.gradLogp, cpu.gradLogp, { atol: 1e-5 * largest, rtol: 1e-4 });
  expectClose([cuda.loss, cuda.stats.policyLoss], [cpu.loss, cpu.stats.policyLoss], { atol: 1e-5 * (1 + 4 * total), rtol: 1e-5 });
  const { policyLoss: _cudaPolicy, ...cudaStats } = cuda.stats;
  const { policyLoss: _cpuPolicy, ...cpuStats } = cpu.stats;
  expectClose(Object.values(cudaStats), Object.values(cpuStats), { atol: 1e-12, rtol: 1e-5 });
  expect(Object.keys(cudaStats)).toEqual(Object.keys(cpuStats));
}

// TRL luspo's all-positions mean reads padding (docs/advantages-and-loss.md): there padding holds finite log-probs.
const ALL_POSITIONS = 'allPositionsLengthWeighted';
const readable = (input: PolicyLossInput, options: PolicyLossCallOptions): PolicyLossInput =>
  (options.aggregation === ALL_POSITIONS ? { ...input, logp: input.logp.map((x, i) => (input.mask[i] ? x : -0.7)) } : input);

function compareDevices(input: PolicyLossInput, options: PolicyLossCallOptions): void {
  const x = readable(input, options);
  expectLossParity(policyLossSync(x, { ...options, device: 'cuda' }), policyLossSync(x, options));
}

/** [code, message] of what `fn` throws, or undefined. */
function errorOf(fn: () => unknown): [string, string] | undefined {
  let thrown: unknown;
  try {
    fn();
    return undefined;
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(GrpoError);
  return [(thrown as GrpoError).code, (thrown as GrpoError).message];
}

const KL_AND_CLIPS = {
  delta: 1.5, dualClipC: 3, logRatioClamp: 20, beta: 0.1, klEstimator: 'k3', klClamp: 'verl', klBiasCorrection: true,
  tokenCount: 500, sequenceCount: 20, lossScaleFactor: 64, accumulationSteps: 2, topEntropyQuantile: 0.4,
} as const;

describe.runIf(gpu)('policy loss: CUDA vs CPU', () => {
  const plain = lossInput(13, 97, 0.3, 41);
  const wild = lossInput(5, 33, 30, 43);
  const perRow = { ...plain, advantages: plain.advantages.slice(0, 13) };

  for (const [name, preset] of Object.entries(presets)) {
    it(`preset ${name}`, () => {
      const options = { ...preset.loss, maxCompletionLength: 150, numItems: preset.loss.isLevel === 'item' ? 3 : null };
      compareDevices(plain, options);
      compareDevices(perRow, options);
    });
  }

  for (const lossType of LOSS_TYPES) {
    for (const isLevel of IS_LEVELS) {
      it(`${lossType} at the ${isLevel} level, every aggregation, with and without KL and clips`, () => {
        for (const aggregation of AGGREGATIONS.filter((a) => a !== ALL_POSITIONS || isLevel !== 'item')) { // no item level there
          const options = { lossType, isLevel, aggregation, maxCompletionLength: 150, numItems: 3 } as const;
          compareDevices(plain, options);
          compareDevices(perRow, options);
          compareDevices(wild, options);
          compareDevices(plain, { ...options, ...KL_AND_CLIPS });
          compareDevices(wild, { ...options, ...KL_AND_CLIPS });
        }
      });
    }
  }

  it('every KL estimator and clamp', () => {
    for (const klEstimator of ['k1', 'abs', 'k2', 'k3'] as const) {
      for (const klClamp of ['none', 'verl', 'openrlhf'] as const) {
        const options = { isLevel: 'sequenceToken', beta: 0.3, klEstimator, klClamp, aggregation: 'localTokenMean' } as const;
        compareDevices(plain, { ...options, klBiasCorrection: true });
        compareDevices(wild, { ...options, klBiasCorrection: klClamp !== 'none' }); // unclamped k3 × e^87 overflows float
      }
    }
  });

  it('an empty mask gives zero or NaN on both devices', () => {
    const empty = { ...plain, mask: new Uint8Array(plain.mask.length) };
    for (const emptyBatch of ['zero', 'nan'] as const) compareDevices(empty, { isLevel: 'item', numItems: 3, emptyBatch });
  });

  it('bad inputs give the same typed error on both devices', () => {
    const bad = { ...plain, logp: plain.logp.slice(), mask: plain.mask.slice() };
    bad.logp[2 * 97 + 3] = NaN;
    bad.mask[2 * 97 + 3] = 1;
    const segments = plain.segments.slice();
    segments[plain.mask.indexOf(1, 4 * 97)] = -2; // a masked-in token of row 4
    const badSegment = { ...plain, segments };
    const cases: [PolicyLossInput, PolicyLossCallOptions][] = [
      [bad, {}], [bad, { lossType: 'sapo', isLevel: 'sequence' }], [badSegment, { lossType: 'gpg', isLevel: 'item', numItems: 3 }],
      [badSegment, { isLevel: 'item', numItems: 3 }], [plain, { epsilonLow: -1 }], [{ ...plain, refLogp: undefined } as PolicyLossInput, { beta: 0.1 }],
    ];
    for (const [input, options] of cases) {
      const cpu = errorOf(() => policyLossSync(input, options));
      expect(cpu).toBeDefined();
      expect(errorOf(() => policyLossSync(input, { ...options, device: 'cuda' }))).toEqual(cpu);
    }
    expect(errorOf(() => policyLossSync(bad, { device: 'cuda' }))?.[1]).toContain('row 2, column 3');
  });

  it('the Promise form runs on the GPU too', async () => {
    const options = { ...presets.verl.loss, device: 'cuda' } as const;
    expect(await policyLoss(plain, options)).toEqual(policyLossSync(plain, options));
  });

  it("token advantages are bitwise the CPU's (item scatter and broadcast)", () => {
    const rows = 64;
    const cols = 300;
    const random = seededRandom(23);
    const mask = Uint8Array.from({ length: rows * cols }, () => (random() < 0.9 ? 1 : 0)); // [rows, cols]
    const scatter: TokenAdvantageInput = {
      advantages: randomNormal(rows * 10, 1, 24), // [rows, ranks]
      mask,
      segments: Int32Array.from({ length: rows * cols }, (_, i) => Math.floor((i % cols) / 25) - 1), // [rows, cols]
      eosPositions: Int32Array.from({ length: rows }, (_, b) => (b % 5 === 0 ? -1 : 100 + b)), // [rows]
    };
    expect(tokenAdvantagesSync(scatter, { ranks: 10, device: 'cuda' })).toEqual(tokenAdvantagesSync(scatter, { ranks: 10 }));
    const broadcast: TokenAdvantageInput = {
      advantages: randomNormal(rows, 1, 25), // [rows]
      mask,
      truncated: Uint8Array.from({ length: rows }, (_, b) => (b % 3 === 0 ? 1 : 0)),
      prefixEnd: Int32Array.from({ length: rows }, (_, b) => b * 4),
    };
    const options = { truncation: 'dropSuffix' } as const;
    expect(tokenAdvantagesSync(broadcast, { ...options, device: 'cuda' })).toEqual(tokenAdvantagesSync(broadcast, options));
  });
});

describe('policy loss and token advantages without a usable CUDA addon', () => {
  const input = lossInput(4, 9, 0.3, 51);
  const scatter: TokenAdvantageInput = {
    advantages: randomNormal(4 * 3, 1, 52), // [rows, ranks]
    mask: input.mask,
    segments: input.segments,
    eosPositions: Int32Array.of(8, -1, 5, 7), // [rows]
  };
  const broadcast: TokenAdvantageInput = { advantages: randomNormal(4, 1, 53), mask: input.mask }; // [rows]

  /** Fresh module copies whose loader finds no CUDA addon (a path that does not exist). */
  async function withoutCuda() {
    const saved = process.env.GRPO_NATIVE_CUDA_ADDON;
    process.env.GRPO_NATIVE_CUDA_ADDON = '/nonexistent/grpo_native_cuda.node';
    vi.resetModules();
    try {
      const cuda = await import('../lib/binding/index.js');
      const why = cuda.loadCuda().reason; // cached from here on
      return {
        errors: await import('../lib/errors.js'),
        why,
        loss: await import('../lib/kernels/loss.js'),
        tokens: await import('../lib/kernels/token-advantages.js'),
      };
    } finally {
      if (saved === undefined) delete process.env.GRPO_NATIVE_CUDA_ADDON;
      else process.env.GRPO_NATIVE_CUDA_ADDON = saved;
    }
  }

  it("device 'cuda' is GRPO_CUDA_UNAVAILABLE naming the reason, for every form", async () => {
    const { errors, why, loss, tokens } = await withoutCuda();
    expect(why).toContain('/nonexistent/grpo_native_cuda.node: not found');
    const calls = [
      () => loss.policyLossSync(input, { device: 'cuda' }),
      () => tokens.tokenAdvantagesSync(scatter, { ranks: 3, device: 'cuda' }),
      () => tokens.tokenAdvantagesSync(broadcast, { device: 'cuda' }),
    ];
    for (const call of calls) {
      expect(call).toThrow(errors.GrpoError);
      expect(call).toThrow(why);
      try {
        call();
      } catch (error) {
        expect((error as GrpoError).code).toBe('GRPO_CUDA_UNAVAILABLE');
      }
    }
    await expect(loss.policyLoss(input, { device: 'cuda' })).rejects.toMatchObject({ code: 'GRPO_CUDA_UNAVAILABLE' });
    await expect(tokens.tokenAdvantages(broadcast, { device: 'cuda' })).rejects.toMatchObject({ code: 'GRPO_CUDA_UNAVAILABLE' });
  });

  it("device 'auto' gives the CPU's result", async () => {
    const { loss, tokens } = await withoutCuda();
    for (const options of [{}, presets.verl.loss, { ...presets.rankGrpo.loss, numItems: 3 }, presets.gspoTrl.loss]) {
      expect(loss.policyLossSync(input, { ...options, device: 'auto' })).toEqual(loss.policyLossSync(input, options));
      expect(await loss.policyLoss(input, { ...options, device: 'auto' })).toEqual(loss.policyLossSync(input, options));
    }
    expect(tokens.tokenAdvantagesSync(scatter, { ranks: 3, device: 'auto' })).toEqual(tokens.tokenAdvantagesSync(scatter, { ranks: 3 }));
    expect(tokens.tokenAdvantagesSync(broadcast, { device: 'auto' })).toEqual(tokens.tokenAdvantagesSync(broadcast));
  });

  it('an unknown device is GRPO_VALUE_RANGE naming the argument', () => {
    const device = 'gpu' as unknown as 'cuda';
    expect(errorOf(() => policyLossSync(input, { device }))?.[0]).toBe('GRPO_VALUE_RANGE');
    expect(errorOf(() => policyLossSync(input, { device }))?.[1]).toContain('policyLoss device');
    expect(errorOf(() => tokenAdvantagesSync(broadcast, { device }))?.[1]).toContain('tokenAdvantages device');
  });
});
