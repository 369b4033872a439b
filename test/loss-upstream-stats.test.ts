// Loss statistics, presets and the KL loss against values computed from the upstream formulas
// (float64 transliterations of the lines cited per test, on fixture G's float32 inputs):
//   TRL  huggingface/trl@f2cd577 trl/trainer/grpo_trainer.py
//   verl volcengine/verl@b178a3c verl/trainer/ppo/core_algos.py
import { describe, expect, it } from 'vitest';
import { klLossSync, VERL_AGGREGATIONS, type KlLossInput } from '../lib/kernels/kl-loss.js';
import { policyLossSync, type PolicyLossInput, type PolicyLossOptions } from '../lib/kernels/loss.js';
import { presets } from '../lib/kernels/presets.js';
import { expectClose } from './helpers/close.js';

const close = (actual: number, expected: number) => expectClose([actual], [expected]);

/** Fixture G: [B, T] = [3, 4], rows of 3, 2 and 4 tokens; padding holds finite, non-zero values. */
const G = {
  mask: [1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1],
  advantages: [0.8, -1.2, 0.5],
  logp: [-0.800000011920929, -0.699999988079071, -0.6000000238418579, -1.7000000476837158, -1.7999999523162842, -1.399999976158142,
    -0.699999988079071, -0.8999999761581421, -0.8999999761581421, -1.350000023841858, -0.47999998927116394, -0.8700000047683716],
  old: [-1.0, -1.2000000476837158, -0.800000011920929, -2.0, -1.5, -0.8999999761581421, -1.100000023841858, -0.699999988079071,
    -1.0, -1.2999999523162842, -0.6000000238418579, -0.8999999761581421],
  ref: [-0.699999988079071, -0.8999999761581421, -0.550000011920929, -1.399999976158142, -1.649999976158142, -1.5, -0.5,
    -1.149999976158142, -0.949999988079071, -1.25, -0.47999998927116394, -0.6700000166893005],
};
const fixtureG = (logp: readonly number[] = G.logp): PolicyLossInput => ({
  shape: [3, 4], logp: Float32Array.from(logp), oldLogp: Float32Array.from(G.old), refLogp: Float32Array.from(G.ref),
  advantages: Float32Array.from(G.advantages), mask: Uint8Array.from(G.mask),
});
// TRL's counts on one process, GA 1: num_items_in_batch = Σ mask = 9; max_completion_length 6 for dr_grpo.
const counts = { tokenCount: 9, maxCompletionLength: 6 } as const;
const onG = (options: PolicyLossOptions, logp?: readonly number[]) => policyLossSync(fixtureG(logp), { ...options, ...counts });

describe('TRL statistics', () => {
  // grpo_trainer.py L3222-3253: global_masked_mean of a [B, 1] flag (sequence level) is Σ / B, of a [B, T] one Σ m·x / Σ m.
  it('sequence-level clip ratios are means over sequences of the per-sequence flag', () => {
    const sequence = onG(presets.trlGrpoSequence.loss).stats;
    close(sequence.clipRatioLow, 1 / 3); // row 1: r = 0.67 < 0.8, A < 0
    close(sequence.clipRatioHigh, 1 / 3); // row 0: r = 1.35 > 1.2, A > 0
    close(sequence.clipRatioRegion, 2 / 3);
    const token = onG(presets.trlGrpo.loss).stats; // token level stays token-weighted
    close(token.clipRatioLow, 2 / 9);
    close(token.clipRatioHigh, 3 / 9);
    close(token.clipRatioRegion, 5 / 9);
  });

  // grpo_trainer.py L3066-3075 (per_token_kl *= coef_1 with use_bias_correction_kl) and L3240-3241 (kl logged from it).
  it('use_bias_correction_kl: the logged kl is KL × ratio', () => {
    const token = onG({ ...presets.trlDapo.loss, beta: 0.04, klBiasCorrection: true });
    close(token.loss, -0.340447169);
    close(token.stats.kl, 0.0087536859);
    const sequence = onG({ ...presets.trlGrpoSequence.loss, beta: 0.04, klBiasCorrection: true });
    close(sequence.loss, -0.1748888958);
    close(sequence.stats.kl, 0.0082648475);
    close(onG({ ...presets.trlDapo.loss, beta: 0.04 }).stats.kl, 0.0077386143); // without: the plain k3 mean
  });

  // grpo_trainer.py L2943-2989 (get_gamma_weights, phi_seq [B, 1]) and L3257-3258 (vespo/phi_seq_mean).
  it('vespo reports phiSeqMean; other losses NaN', () => {
    const { loss, stats } = onG(presets.trlVespo.loss);
    close(loss, 0.0512876594);
    close(stats.phiSeqMean, 0.3721919161);
    expect(onG(presets.trlGrpo.loss).stats.phiSeqMean).toBeNaN();
  });
});

describe('TRL luspo', () => {
  // grpo_trainer.py L3143-3148: loss = (per_token_loss * mask.sum(1, keepdim=True)).mean(); a [B, T] per-token loss
  // (token level, or sequence level with beta != 0: L3121-3122 adds the [B, T] KL) is averaged over all B·T positions.
  const luspoTokenGrad = [0, 0, 0, 0, 0, 0, 0.29836495, 0.163746153, -0.184195157, -0.158538226, -0.187916148, -0.171742417];
  const luspoSequenceKlGrad = [-0.001051709, 0.001812692, -0.000512711, -0.003498589, -0.001078895, 0.000634417,
    -0.001476018, 0.001474662, -0.174561573, -0.176614127, -0.175211848, -0.178163884];

  it('token level: padding positions carry loss and gradient', () => {
    const { loss, gradLogp } = onG(presets.trlLuspo.loss);
    close(loss, -0.8802808466);
    expectClose(gradLogp, luspoTokenGrad, { atol: 1e-6, rtol: 1e-4 });
  });

  it('sequence level: exact with beta 0, allPositionsLengthWeighted with beta != 0', () => {
    close(onG(presets.trlLuspoSequence.loss).loss, -1.0208473903);
    const withKl = onG({ ...presets.trlLuspoSequence.loss, beta: 0.04, aggregation: 'allPositionsLengthWeighted' });
    close(withKl.loss, -1.0192805316);
    expectClose(withKl.gradLogp, luspoSequenceKlGrad, { atol: 1e-6, rtol: 1e-4 });
    // the length-weighted sequence mean over masked tokens is not TRL's number once beta != 0
    expect(Math.abs(onG({ ...presets.trlLuspoSequence.loss, beta: 0.04 }).loss - withKl.loss)).toBeGreaterThan(1e-4);
  });

  it('rejects the item level and non-finite padding it reads', () => {
    expect(() => onG({ aggregation: 'allPositionsLengthWeighted', isLevel: 'item', numItems: 2 })).toThrow(/isLevel/);
    const poisoned = G.logp.map((v, i) => (i === 3 ? NaN : v));
    expect(() => onG(presets.trlLuspo.loss, poisoned)).toThrow(/row 0, column 3/);
    expect(() => onG(presets.trlGrpo.loss, poisoned)).not.toThrow();
  });
});

describe('verl statistics', () => {
  // core_algos.py L1209-1214 (vanilla): negative_approx_kl clamped to ±20, then ppo_kl = masked_mean(-negative_approx_kl).
  it('ppo_kl is computed from the log-ratio after the ±20 clamp', () => {
    const big = G.logp.map((v, i) => (i === 1 ? G.old[1] + 25 : i === 4 ? G.old[4] - 30 : v));
    close(onG({ ...presets.verl.loss, beta: 0 }, big).stats.ppoKl, -0.0111111038);
  });
});

describe('presets for every TRL loss_type at both IS levels, verl sapo and cispo', () => {
  // grpo_trainer.py L3052-3150 with epsilon 0.2, beta 0, cispo epsilon_high 5.0 (the cap), GA 1.
  const TRL: [keyof typeof presets, number][] = [
    ['trlGrpo', -0.1755979873], ['trlGrpoSequence', -0.1752118476],
    ['trlBnpo', -0.3407973164], ['trlBnpoSequence', -0.3402824634],
    ['trlDrGrpo', -0.1703986582], ['trlDrGrpoSequence', -0.1701412317],
    ['trlDapo', -0.3407973164], ['trlDapoSequence', -0.3402824634],
    ['trlCispo', 0.1700410973], ['trlCispoSequence', 0.1762246466],
    ['trlSapo', -0.3377183665], ['trlSapoSequence', -0.3362315009],
    ['trlLuspo', -0.8802808466], ['trlLuspoSequence', -1.0208473903],
    ['trlVespo', 0.0512876594], ['trlVespoSequence', 0.0512876594],
  ];

  it.each(TRL)('%s', (name, expected) => {
    close(onG(presets[name].loss).loss, expected);
    expect(presets[name].loss.isLevel).toBe(name.endsWith('Sequence') ? 'sequence' : 'token');
  });

  // core_algos.py L1329-1411 (sapo: ±20 clamp, tau 1.0 / 1.05, seq-mean-token-mean) and L1721-1779 (cispo:
  // -sg(clamp(r, 0.8, 1.2))·A·logp, token-mean, pg_clipfrac = mean(ratio != clipped)).
  it('verlSapo and verlCispo', () => {
    close(onG({ ...presets.verlSapo.loss, beta: 0 }).loss, -0.3377183668);
    const cispo = onG({ ...presets.verlCispo.loss, beta: 0 });
    close(cispo.loss, 0.08913931);
    close(cispo.stats.clipRatioRegion, 0.5555555556);
  });
});

describe('klLoss: verl agg_loss(kl_penalty(...))', () => {
  // core_algos.py L1841-1903 (kl_penalty, "+" = k2's gradient with the estimator's value) and L1025-1082 (agg_loss:
  // token-mean Σ/Σm; seq-mean-* over the sequences with a token; seq-mean-token-sum-norm Σ/T).
  const EXPECTED = {
    'token-mean': { low_var_kl: 0.0077386143, kl: -0.0277777778, abs: 0.1055555609, mse: 0.0076388889,
      grad: [-0.01168566, 0.020141026, -0.00569679, 0, -0.017981579, 0.010573623, 0, 0, 0.005418954, -0.01168566, 0, -0.024600305],
      gradPlus: [-0.011111114, 0.022222221, -0.005555557, 0, -0.016666664, 0.011111114, 0, 0, 0.005555557, -0.011111114, 0, -0.022222221] },
    'seq-mean-token-sum': { low_var_kl: 0.0232158429, kl: -0.0833333333, abs: 0.3166666826, mse: 0.0229166667,
      grad: [-0.035056981, 0.060423079, -0.01709037, 0, -0.053944738, 0.031720868, 0, 0, 0.016256862, -0.035056981, 0, -0.073800915],
      gradPlus: [-0.033333341, 0.066666663, -0.016666671, 0, -0.049999992, 0.033333341, 0, 0, 0.016666671, -0.033333341, 0, -0.066666663] },
    'seq-mean-token-mean': { low_var_kl: 0.0078925092, kl: -0.0236111084, abs: 0.1097222264, mse: 0.0078124999,
      grad: [-0.01168566, 0.020141026, -0.00569679, 0, -0.026972369, 0.015860434, 0, 0, 0.004064216, -0.008764245, 0, -0.018450229],
      gradPlus: [-0.011111114, 0.022222221, -0.005555557, 0, -0.024999996, 0.016666671, 0, 0, 0.004166668, -0.008333335, 0, -0.016666666] },
    'seq-mean-token-sum-norm': { low_var_kl: 0.0174118822, kl: -0.0625, abs: 0.2375000119, mse: 0.0171875,
      grad: [-0.026292736, 0.045317309, -0.012817777, 0, -0.040458554, 0.023790651, 0, 0, 0.012192647, -0.026292736, 0, -0.055350686],
      gradPlus: [-0.025000006, 0.049999997, -0.012500003, 0, -0.037499994, 0.025000006, 0, 0, 0.012500003, -0.025000006, 0, -0.049999997] },
  } as const;
  const input: KlLossInput = { shape: [3, 4], logp: Float32Array.from(G.logp), refLogp: Float32Array.from(G.ref), mask: Uint8Array.from(G.mask) };
  // One more row with no token: verl's seq-mean modes leave it out of the count; the other modes are unchanged by it.
  const withEmptyRow: KlLossInput = {
    shape: [4, 4], logp: Float32Array.from([...G.logp, 0, 0, 0, 0]), refLogp: Float32Array.from([...G.ref, 0, 0, 0, 0]),
    mask: Uint8Array.from([...G.mask, 0, 0, 0, 0]),
  };

  it.each(VERL_AGGREGATIONS)('%s: every estimator, the k3 gradient and the "+" gradient', (aggregation) => {
    const e = EXPECTED[aggregation];
    for (const klType of ['low_var_kl', 'kl', 'abs', 'mse'] as const) {
      close(klLossSync(input, { klType, aggregation }).loss, e[klType]);
      close(klLossSync(withEmptyRow, { klType, aggregation }).loss, e[klType]);
    }
    const k3 = klLossSync(input, { aggregation });
    expectClose(k3.gradLogp, e.grad, { atol: 1e-6, rtol: 1e-4 });
    const plus = klLossSync(input, { klType: 'low_var_kl+', aggregation });
    close(plus.loss, e.low_var_kl);
    expectClose(plus.gradLogp, e.gradPlus, { atol: 1e-6, rtol: 1e-4 });
    close(k3.stats.kl, EXPECTED['token-mean'].low_var_kl);
    expect(k3.stats.tokens).toBe(9);
  });

  it('k3 clamps at ±20 / ±10 as verl does; an empty mask gives NaN; bad options are typed errors', () => {
    const far: KlLossInput = { shape: [1, 1], logp: Float32Array.of(-30), refLogp: Float32Array.of(0), mask: Uint8Array.of(1) };
    expect(klLossSync(far).loss).toBe(10); // e^20 - 20 - 1 clamped to 10, no gradient
    expect(klLossSync(far).gradLogp[0]).toBe(0);
    expect(klLossSync({ ...far, mask: Uint8Array.of(0) }).loss).toBeNaN();
    expect(() => klLossSync(input, { klType: 'full' as 'kl' })).toThrow(expect.objectContaining({ code: 'GRPO_VALUE_RANGE' }));
    expect(() => klLossSync(input, { beta: 1 } as object)).toThrow(expect.objectContaining({ code: 'GRPO_UNKNOWN_OPTION' }));
  });
});
