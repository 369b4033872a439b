import { oneOf } from '../validate.js';

/**
 * How per-rank hits become per-rank rewards.
 * - `"hit"` (upstream `exp_inf`): `R_k = h_k`.
 * - `"dcgTail"` (upstream `log_decay`): `R_k = Σ_{j≥k} h_j·d_j` with `d_1 = 1`, `d_j = 1/log2(j+1)`:
 *   the DCG still obtainable from rank k onward.
 */
export type RankShape = 'hit' | 'dcgTail';

export const RANK_SHAPES: readonly RankShape[] = Object.freeze(['hit', 'dcgTail']);

/** DCG discount of 0-based rank j: 1 for j = 0, else 1/log2(j+2). */
export function dcgDiscount(j: number): number {
  return j === 0 ? 1 : 1 / Math.log2(j + 2);
}

/**
 * Writes the shaped rewards of `hits` (one value per rank, 0..1) into `out[offset .. offset+hits.length)`.
 * Accumulates in float64, stores float32.
 */
export function shapeRewards(hits: ArrayLike<number>, shape: RankShape, out: Float32Array, offset = 0): void {
  oneOf('shape', shape, RANK_SHAPES);
  if (shape === 'hit') {
    for (let k = 0; k < hits.length; k++) out[offset + k] = hits[k];
    return;
  }
  let tail = 0;
  for (let k = hits.length - 1; k >= 0; k--) {
    tail += hits[k] * dcgDiscount(k);
    out[offset + k] = tail;
  }
}
