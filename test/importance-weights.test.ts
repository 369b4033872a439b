// The truncated importance weights of remote rollouts (lib/trainer/importance.ts) against TRL's vLLM correction,
// written out here from huggingface/trl at f2cd577, trl/trainer/grpo_trainer.py: L2579–2590 ratio = exp((old −
// sampling) · mask), per token or of the row sum ("sequence_*" modes); L2596–2618 clamp into
// [clip_min, clip_max] (clip_max the former vllm_importance_sampling_cap) or zero outside it (mask modes); L2779–2812 the sampling/* metrics
// over the masked tokens (the [B] ratios in sequence mode); L3117–3121 per_token_loss × ratio before + β·KL. The
// last is checked through the loss kernel: with the advantages weighted, the loss is the weighted sum of the
// per-token terms, and the KL gradient is as it was.
import { describe, expect, it } from 'vitest';
import { policyLossSync, type PolicyLossOptions } from '../lib/kernels/loss.js';
import { importanceWeights, weightAdvantages } from '../lib/trainer/importance.js';

// two rows, width 3: lengths 2 and 3 (row 0's last position is padding)
const old = Float32Array.of(-1, -2, 0, -0.5, -3, -0.25);
const sampling = [Float32Array.of(-1.5, -1), Float32Array.of(-0.5, -2.5, -1)];
const lengths = [2, 3];

describe('importance weights', () => {
  it('token mode: exp(old − sampling) per token, capped, TRL\'s metrics over the completion tokens', () => {
    const { weights, metrics } = importanceWeights(old, sampling, lengths, 3, { correction: 'tokenTruncate', clipMin: 0, clipMax: 2 });
    const expected = [Math.exp(0.5), Math.exp(-1), 1, 1, Math.exp(-0.5), 2 /* exp(0.75) = 2.117 capped */];
    expected.forEach((w, i) => expect(weights[i]).toBeCloseTo(w, 6));
    expect(metrics['sampling/sampling_logp_difference/mean']).toBeCloseTo((0.5 + 1 + 0 + 0.5 + 0.75) / 5, 6);
    expect(metrics['sampling/sampling_logp_difference/max']).toBeCloseTo(1, 6);
    expect(metrics['sampling/importance_sampling_ratio/min']).toBeCloseTo(Math.exp(-1), 6);
    expect(metrics['sampling/importance_sampling_ratio/max']).toBeCloseTo(2, 6);
    expect(metrics['sampling/importance_sampling_ratio/mean']).toBeCloseTo((Math.exp(0.5) + Math.exp(-1) + 1 + Math.exp(-0.5) + 2) / 5, 6);
  });

  it('sequence mode: exp of the row\'s summed difference over the whole row, one ratio per sequence in the metrics', () => {
    const { weights, metrics } = importanceWeights(old, sampling, lengths, 3, { correction: 'sequenceTruncate', clipMin: 0, clipMax: 3 });
    const row0 = Math.exp(0.5 - 1), row1 = Math.min(Math.exp(0 - 0.5 + 0.75), 3);
    [row0, row0, row0, row1, row1, row1].forEach((w, i) => expect(weights[i]).toBeCloseTo(w, 6));
    expect(metrics['sampling/importance_sampling_ratio/mean']).toBeCloseTo((row0 + row1) / 2, 6);
    expect(metrics['sampling/importance_sampling_ratio/min']).toBeCloseTo(row0, 6);
  });

  it('mask modes: the ratio where it lies in [clipMin, clipMax], else 0; clipMin also bounds the truncate modes', () => {
    const token = importanceWeights(old, sampling, lengths, 3, { correction: 'tokenMask', clipMin: 0.5, clipMax: 2 }).weights;
    [Math.exp(0.5), 0 /* exp(-1) < 0.5 */, 1, 1, Math.exp(-0.5), 0 /* exp(0.75) > 2 */].forEach((w, i) => expect(token[i]).toBeCloseTo(w, 6));
    const sequence = importanceWeights(old, sampling, lengths, 3, { correction: 'sequenceMask', clipMin: 0.7, clipMax: 3 });
    [0, 0, 0].concat(Array(3).fill(Math.exp(0.25))).forEach((w, i) => expect(sequence.weights[i]).toBeCloseTo(w, 6)); // row 0: exp(-0.5) < 0.7
    expect(sequence.metrics['sampling/importance_sampling_ratio/min']).toBe(0); // TRL logs the masked ratios
    const truncated = importanceWeights(old, sampling, lengths, 3, { correction: 'tokenTruncate', clipMin: 0.5, clipMax: 2 }).weights;
    expect(truncated[1]).toBeCloseTo(0.5, 6);
  });

  it('an empty batch logs zeros, as TRL does', () => {
    const { metrics } = importanceWeights(new Float32Array(2), [new Float32Array(0), new Float32Array(0)], [0, 0], 1, { correction: 'tokenTruncate', clipMin: 0, clipMax: 3 });
    expect(Object.values(metrics)).toEqual([0, 0, 0, 0, 0]);
  });

  describe.each([
    ['clip', { lossType: 'clip' }],
    ['clip, sequence-level ratio (GSPO)', { lossType: 'clip', isLevel: 'sequence' }],
    ['cispoCap', { lossType: 'cispoCap' }],
    ['sapo', { lossType: 'sapo' }],
    ['gpg', { lossType: 'gpg' }],
  ] as [string, PolicyLossOptions][])('weighted advantages in the loss kernel (%s)', (_name, loss) => {
    // off-policy ratios (logp ≠ old) so clipping is active on some tokens
    const shape = [2, 3] as const;
    const logp = Float32Array.of(-0.6, -2.4, 0, -0.4, -2.2, -0.3);
    const advantages = Float32Array.of(1.5, 1.5, 0, -0.7, -0.7, -0.7);
    const mask = Uint8Array.of(1, 1, 0, 1, 1, 1);
    const refLogp = Float32Array.of(-0.9, -1.9, 0, -0.6, -2.6, -0.2);
    const { weights } = importanceWeights(old, sampling, lengths, 3, { correction: 'tokenTruncate', clipMin: 0, clipMax: 3 });
    const grad = (a: Float32Array, beta: number) => policyLossSync({ shape, logp, oldLogp: old, refLogp, advantages: a, mask }, { ...loss, beta }).gradLogp;

    it('weights each token\'s policy term (per_token_loss × ratio): the loss is Σ_t w_t · ℓ_t', () => {
      // ℓ_t: the loss with token t's advantage alone (every loss here is a sum of per-token terms linear in the advantage)
      const value = (a: Float32Array) => policyLossSync({ shape, logp, oldLogp: old, refLogp, advantages: a, mask }, { ...loss, beta: 0 }).loss;
      const alone = (t: number) => value(advantages.map((a, i) => (i === t ? a : 0)));
      const terms = Array.from(advantages, (_, t) => (mask[t] ? weights[t] * alone(t) : 0));
      expect(terms.filter((x) => x !== 0).length).toBeGreaterThan(2);
      expect(value(weightAdvantages(advantages, weights))).toBeCloseTo(terms.reduce((x, y) => x + y, 0), 6);
      expect(value(weightAdvantages(advantages, weights))).not.toBeCloseTo(value(advantages), 3);
    });

    it('leaves the KL term unweighted (+ β·KL after the product)', () => {
      const kl = (a: Float32Array) => grad(a, 0.3).map((g, i) => g - grad(a, 0)[i]);
      const plainKl = kl(advantages), weightedKl = kl(weightAdvantages(advantages, weights));
      expect(plainKl.some((g) => Math.abs(g) > 1e-4)).toBe(true);
      weightedKl.forEach((g, i) => expect(g).toBeCloseTo(plainKl[i], 6));
    });
  });
});
