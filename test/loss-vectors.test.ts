// The policy loss against the upstream vectors TV12–TV22 (TRL, verl, Rank-GRPO), fixture F.
import { describe, expect, it } from 'vitest';
import { policyLoss, policyLossSync, type PolicyLossInput, type PolicyLossOptions } from '../lib/kernels/loss.js';
import { F, TV12, TV13, TV14, TV15, TV16, TV17, TV18, TV19, TV20, TV21, TV22 } from './fixtures/grpo-vectors.js';
import { expectClose } from './helpers/close.js';

const close = (actual: number, expected: number) => expectClose([actual], [expected]);

function fixtureF(rows: readonly number[] = [0, 1], extra: Partial<PolicyLossInput> = {}): PolicyLossInput {
  const pick = (xs: readonly number[]) => Float32Array.from(rows.flatMap((b) => xs.slice(b * 4, b * 4 + 4)));
  return {
    shape: [rows.length, 4],
    logp: pick(F.logp),
    oldLogp: pick(F.old),
    advantages: Float32Array.from(rows, (b) => F.advantages[b]),
    mask: Uint8Array.from(rows.flatMap((b) => F.mask.slice(b * 4, b * 4 + 4))),
    ...extra,
  };
}
const onF = (options: PolicyLossOptions, extra?: Partial<PolicyLossInput>) => policyLossSync(fixtureF([0, 1], extra), options);

const verlVanilla = { dualClipC: 3, logRatioClamp: 20 } as const;

describe('TV14: TRL clip loss on fixture F (ε 0.2, β 0)', () => {
  it('grpo, bnpo, dr_grpo and dapo', () => {
    close(onF({ aggregation: 'seqMeanTokenMean' }).loss, TV14.grpo);
    close(onF({ aggregation: 'localTokenMean' }).loss, TV14.bnpo);
    close(onF({ aggregation: 'tokenSumOverBL', maxCompletionLength: 4 }).loss, TV14.drGrpo4);
    close(onF({ aggregation: 'globalTokenMean', tokenCount: 5 }).loss, TV14.dapo);
    close(onF({ tokenCount: 10 / 2 }).loss, TV14.dapo); // num_items 10 over P = 2 processes
  });

  it('clip ratios, epsilon_high and delta', () => {
    const { stats } = onF({});
    close(stats.clipRatioLow, TV14.clipLow);
    close(stats.clipRatioHigh, TV14.clipHigh);
    close(stats.clipRatioRegion, TV14.clipRegion);
    close(onF({ epsilonHigh: 0.28 }).loss, TV14.dapoEpsHigh028);
    close(onF({ aggregation: 'localTokenMean', delta: 3 }).loss, TV14.bnpoDelta3);
  });
});

describe('TV15: verl vanilla (dual clip c = 3) on fixture F', () => {
  it('every loss_agg_mode', () => {
    close(onF({ ...verlVanilla, aggregation: 'localTokenMean' }).loss, TV15.tokenMean);
    close(onF({ ...verlVanilla, aggregation: 'seqMeanTokenMean' }).loss, TV15.seqMeanTokenMean);
    close(onF({ ...verlVanilla, aggregation: 'seqMeanTokenSum' }).loss, TV15.seqMeanTokenSum);
    close(onF({ ...verlVanilla, aggregation: 'tokenSumOverL' }).loss, TV15.seqMeanTokenSumNorm);
  });

  it('pg_clipfrac, pg_clipfrac_lower, ppo_kl, and clip_ratio_c = 10', () => {
    const { stats } = onF({ ...verlVanilla, aggregation: 'localTokenMean' });
    close(stats.clipRatioRegion, TV15.clipfrac);
    close(stats.dualClipRatio, TV15.clipfracLower);
    close(stats.ppoKl, TV15.ppoKl);
    const c10 = onF({ ...verlVanilla, dualClipC: 10, aggregation: 'localTokenMean' });
    close(c10.loss, TV15.tokenMeanC10);
    expect(c10.stats.dualClipRatio).toBe(0);
  });
});

describe('TV16: accumulation scope over two micro-batches (GA = 2)', () => {
  const sumOverMicroBatches = (options: PolicyLossOptions) =>
    policyLossSync(fixtureF([0]), options).loss + policyLossSync(fixtureF([1]), options).loss;

  it('the summed micro-batch losses reproduce TRL', () => {
    close(sumOverMicroBatches({ aggregation: 'localTokenMean', accumulationSteps: 2 }), TV16.bnpo);
    close(sumOverMicroBatches({ aggregation: 'seqMeanTokenMean', accumulationSteps: 2 }), TV16.grpo);
    close(sumOverMicroBatches({ aggregation: 'globalTokenMean', tokenCount: 5, accumulationSteps: 2 }), TV16.dapo);
    close(sumOverMicroBatches({ aggregation: 'tokenSumOverBL', maxCompletionLength: 4, accumulationSteps: 2 }), TV16.drGrpo);
  });

  it('with a global token count the micro-batch gradients are the full-batch gradient (peer-landscape §C.2)', () => {
    const full = onF({ tokenCount: 5 }).gradLogp;
    const parts = [...policyLossSync(fixtureF([0]), { tokenCount: 5 }).gradLogp, ...policyLossSync(fixtureF([1]), { tokenCount: 5 }).gradLogp];
    expectClose(parts, full);
    // A local token mean per micro-batch is a different objective (verl #5625): 0.958 ≠ 0.67.
    expect(Math.abs(sumOverMicroBatches({ aggregation: 'localTokenMean', accumulationSteps: 2 }) - TV14.bnpo)).toBeGreaterThan(0.2);
  });
});

describe('TV17–TV20: sequence ratios and other surrogates on fixture F', () => {
  it('TV17: GSPO (TRL sequence level, verl sequence-token level)', () => {
    const trl = onF({ isLevel: 'sequence', aggregation: 'seqMeanTokenMean' });
    close(trl.loss, TV17.loss);
    expect(trl.stats.clipRatioRegion).toBe(0);
    close(onF({ isLevel: 'sequenceToken', aggregation: 'seqMeanTokenMean', logRatioClamp: 10 }).loss, TV17.loss);
  });

  it('TV18: SAPO (TRL = verl)', () => {
    close(onF({ lossType: 'sapo', aggregation: 'seqMeanTokenMean' }).loss, TV18.loss);
  });

  it('TV19: CISPO, TRL cap and verl clamp', () => {
    close(onF({ lossType: 'cispoCap', cispoCap: 5, tokenCount: 5 }).loss, TV19.cap5);
    close(onF({ lossType: 'cispoCap', cispoCap: 1.2, tokenCount: 5 }).loss, TV19.cap12);
    const verl = onF({ lossType: 'cispoClamp', aggregation: 'localTokenMean', logRatioClamp: 20 });
    close(verl.loss, TV19.verlClamp);
    close(verl.stats.clipRatioRegion, TV19.verlClipfrac);
  });

  it('TV20: gpg, geo_mean, vespo, luspo', () => {
    close(onF({ lossType: 'gpg', aggregation: 'localTokenMean' }).loss, TV20.gpg);
    const geo = onF({ lossType: 'geoMean' });
    close(geo.loss, TV20.geoMean);
    close(geo.stats.clipRatioHigh, TV20.geoClipfrac);
    close(geo.stats.clipRatioLow, TV20.geoClipfrac);
    close(onF({ lossType: 'vespo', tokenCount: 5 }).loss, TV20.vespo);
    close(onF({ isLevel: 'sequence', aggregation: 'seqMeanTokenSum' }).loss, TV20.luspo);
  });
});

describe('TV12–TV13: Rank-GRPO item-level ratio', () => {
  const row = (onPolicy: boolean, extra: Partial<PolicyLossInput> = {}): PolicyLossInput => ({
    shape: [1, 6],
    logp: Float32Array.from(TV12.logRatio, (d) => -1 + d),
    oldLogp: onPolicy ? undefined : new Float32Array(6).fill(-1),
    advantages: Float32Array.from(TV12.advantages),
    mask: new Uint8Array(6).fill(1),
    segments: Int32Array.from(TV12.segments),
    ...extra,
  });
  const rank = { epsilonLow: 0.06, epsilonHigh: 0.08, numItems: 3 } as const;

  it('TV12: item, token and sequence levels with bnpo, grpo, dr_grpo and KL', () => {
    close(policyLossSync(row(false), { ...rank, isLevel: 'item', aggregation: 'localTokenMean' }).loss, TV12.itemBnpo);
    close(policyLossSync(row(false), { ...rank, isLevel: 'item', aggregation: 'seqMeanTokenMean' }).loss, TV12.itemGrpo);
    close(policyLossSync(row(false), { ...rank, isLevel: 'item', aggregation: 'tokenSumOverBL', maxCompletionLength: 8 }).loss, TV12.itemDrGrpo8);
    close(policyLossSync(row(false), { ...rank, isLevel: 'token', aggregation: 'localTokenMean' }).loss, TV12.tokenBnpo);
    close(policyLossSync(row(false), { ...rank, isLevel: 'sequence', aggregation: 'localTokenMean' }).loss, TV12.sequenceBnpo);
    const refLogp = Float32Array.from(TV12.refMinusOld, (x) => -1 + x);
    const kl = policyLossSync(row(false, { refLogp }), { ...rank, isLevel: 'item', aggregation: 'localTokenMean', beta: 1e-3 });
    close(kl.loss, TV12.itemBnpoKl);
  });

  it('TV13: on-policy gradients, item level averages advantages inside an item', async () => {
    const item = await policyLoss(row(true), { ...rank, isLevel: 'item', aggregation: 'localTokenMean' });
    const token = policyLossSync(row(true), { ...rank, isLevel: 'token', aggregation: 'localTokenMean' });
    close(item.loss, TV13.loss);
    close(token.loss, TV13.loss);
    expectClose(item.gradLogp, TV13.gradItem);
    expectClose(token.gradLogp, TV13.gradToken);
    expect(item.stats.ratioMin).toBe(1);
    expect(item.stats.clipRatioRegion).toBe(0);
  });
});

describe('TV21–TV22: KL estimators', () => {
  const klValue = (logp: number, ref: number, options: PolicyLossOptions) => policyLossSync({
    shape: [1, 1], logp: Float32Array.of(logp), refLogp: Float32Array.of(ref), advantages: Float32Array.of(0), mask: Uint8Array.of(1),
  }, { lossType: 'gpg', beta: 1, aggregation: 'localTokenMean', ...options }).loss;
  const row = (options: PolicyLossOptions) => TV21.logp.map((l, i) => klValue(l, TV21.ref[i], options));

  it('TV21: k1, abs, k2, k3 with the TRL, verl and OpenRLHF clamps', () => {
    expectClose(row({ klEstimator: 'k1' }), TV21.k1);
    expectClose(row({ klEstimator: 'k1', klClamp: 'openrlhf' }), TV21.k1OpenRlhf);
    expectClose(row({ klEstimator: 'abs', klClamp: 'verl' }), TV21.abs);
    expectClose(row({ klEstimator: 'k2', klClamp: 'verl' }), TV21.k2);
    expectClose(row({ klEstimator: 'k3' }), TV21.k3);
    expectClose(row({ klEstimator: 'k3', klClamp: 'verl' }), TV21.k3Verl);
    expectClose(row({ klEstimator: 'k3', klClamp: 'openrlhf' }), TV21.k3Verl);
  });

  it('TV22: KL inside the loss (TRL bnpo β = 0.04) and the verl KL mean', () => {
    const refLogp = Float32Array.from(F.old, (o, i) => o + TV22.refMinusOld[i]);
    const trl = onF({ aggregation: 'localTokenMean', beta: 0.04 }, { refLogp });
    close(trl.loss, TV22.bnpoBeta004);
    close(trl.stats.kl, TV22.verlKlTokenMean);
    close(trl.stats.policyLoss, TV14.bnpo);
  });
});

describe('entropy masking (TRL top_entropy_quantile)', () => {
  const input = {
    shape: [1, 4] as const, logp: new Float32Array(4).fill(-1), advantages: Float32Array.of(1),
    mask: Uint8Array.of(1, 1, 1, 0), entropy: Float32Array.of(0.1, 0.5, 0.9, -1e9),
  };

  it('q = 0.5 keeps [F, T, T, F] and q = 0.2 keeps [F, F, T, F]; the denominator is unchanged', () => {
    const half = policyLossSync(input, { lossType: 'gpg', aggregation: 'localTokenMean', topEntropyQuantile: 0.5 });
    close(half.loss, 2 / 3);
    expect(Array.from(half.gradLogp, (g) => g !== 0)).toEqual([false, true, true, false]);
    const fifth = policyLossSync(input, { lossType: 'gpg', aggregation: 'localTokenMean', topEntropyQuantile: 0.2 });
    close(fifth.loss, 1 / 3);
    close(fifth.stats.entropy, 0.5);
  });
});
