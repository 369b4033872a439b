// The engine/trainer mismatch of remote rollouts, corrected as TRL's vLLM importance-sampling correction does
// (huggingface/trl at f2cd577, trl/trainer/grpo_trainer.py L2579–2618: ratio = exp(old − sampling) per token, or of
// the per-sequence sum, clamped into [clip_min, clip_max] or zeroed outside it; L3117–3118: per_token_loss *= ratio, before the KL term is added at
// L3120–3121; L2779–2812: the sampling/* metrics). The weight multiplies each token's advantage here: every policy
// term of the loss kernel is the advantage times a non-negative factor (clipped or not), so scaling the advantage by
// w >= 0 scales the token's policy loss by w, as TRL's product does, and leaves the KL term as it was. VESPO (TRL
// corrects it inside its own weights, L3117) and the geometric-mean loss are refused with a correction (config.ts).
import type { RolloutsConfig } from './config.js';

/** TRL's names of the mismatch, over the completion tokens of a step. */
export interface SamplingMetrics {
  'sampling/sampling_logp_difference/mean': number;
  'sampling/sampling_logp_difference/max': number;
  'sampling/importance_sampling_ratio/min': number;
  'sampling/importance_sampling_ratio/mean': number;
  'sampling/importance_sampling_ratio/max': number;
}

export interface ImportanceWeights {
  /** weights [B, T]; on padding, TRL's: min(exp(0), clipMax) per token, the sequence's weight per sequence */
  weights: Float32Array;
  metrics: SamplingMetrics;
}

const stats = (values: readonly number[]) => values.length === 0
  ? { min: 0, mean: 0, max: 0 } // TRL logs 0 for an empty batch
  : { min: Math.min(...values), mean: values.reduce((a, b) => a + b, 0) / values.length, max: Math.max(...values) };

/** The weight of a ratio under the mode: clamped into [clipMin, clipMax] (truncate) or 0 outside it (mask; TRL L2596–2618). */
function bounded(ratio: number, s: Pick<RolloutsConfig, 'correction' | 'clipMin' | 'clipMax'>): number {
  if (s.correction.endsWith('Mask')) return ratio < s.clipMin || ratio > s.clipMax ? 0 : ratio;
  return Math.min(Math.max(ratio, s.clipMin), s.clipMax);
}

/**
 * Importance weights of the rollout's tokens: `old` [B, T] the trainer's log-probs before the update, `sampling` [B]
 * the engine's log-probs of each completion's tokens, `lengths` [B] the completion lengths.
 */
export function importanceWeights(
  old: Float32Array, sampling: readonly Float32Array[], lengths: readonly number[], width: number,
  settings: Pick<RolloutsConfig, 'correction' | 'clipMin' | 'clipMax'>,
): ImportanceWeights {
  const weights = new Float32Array(lengths.length * width).fill(bounded(1, settings)); // exp(0 · mask) on padding
  const deltas: number[] = [];
  const ratios: number[] = [];
  lengths.forEach((n, b) => {
    const diff = Array.from({ length: n }, (_, t) => old[b * width + t] - sampling[b][t]);
    diff.forEach((d) => deltas.push(Math.abs(d)));
    if (settings.correction.startsWith('sequence')) {
      const ratio = bounded(Math.exp(diff.reduce((a, d) => a + d, 0)), settings);
      weights.fill(ratio, b * width, (b + 1) * width); // TRL's [B, 1] ratio broadcast over the row
      ratios.push(ratio);
    } else {
      diff.forEach((d, t) => ratios.push((weights[b * width + t] = bounded(Math.exp(d), settings))));
    }
  });
  const delta = stats(deltas), ratio = stats(ratios);
  return {
    weights,
    metrics: {
      'sampling/sampling_logp_difference/mean': delta.mean,
      'sampling/sampling_logp_difference/max': delta.max,
      'sampling/importance_sampling_ratio/min': ratio.min,
      'sampling/importance_sampling_ratio/mean': ratio.mean,
      'sampling/importance_sampling_ratio/max': ratio.max,
    },
  };
}

/** advantages [B, T] times the weights [B, T]. */
export function weightAdvantages(advantages: Float32Array, weights: Float32Array): Float32Array {
  return advantages.map((a, i) => a * weights[i]);
}
