// Plain sort-based reference of the sampler in float64: sort each row, walk it, renormalise.
// Penalties are applied in float32 (Math.fround) exactly as the kernel does, so that ties agree.
import { nativeSamplingParams, type SamplingOptions } from '../kernels/sampling-params.js';
import type { NativeSamplingParams } from '../binding/index.js';

export interface SamplingReference {
  /** probs [B, V]: the processed distribution (NaN rows: no allowed finite logit) */
  probs: Float64Array;
  /** rawLogp [B, V]: log-softmax of the penalised, masked logits / temperature (one-hot 0 / -Infinity for greedy rows) */
  rawLogp: Float64Array;
}

function param(values: Float32Array | Int32Array | null, row: number, fallback: number): number {
  return values ? values[row] : fallback;
}

function penalisedRow(x: Float32Array, row: number, vocab: number, p: NativeSamplingParams): Float64Array {
  const words = Math.ceil(vocab / 32);
  const y = Float64Array.from(x);
  for (let t = 0; t < vocab; t++) {
    if (p.allow && !((p.allow[row * words + (t >>> 5)] >>> (t & 31)) & 1)) y[t] = -Infinity;
  }
  if (!p.history || !p.historyOffsets) return y;
  const counts = new Map<number, number>();
  for (let i = p.historyOffsets[row]; i < p.historyOffsets[row + 1]; i++) counts.set(p.history[i], (counts.get(p.history[i]) ?? 0) + 1);
  const r = Math.fround(param(p.repetitionPenalty, row, 1));
  const f = Math.fround(param(p.frequencyPenalty, row, 0));
  const pres = Math.fround(param(p.presencePenalty, row, 0));
  for (const [token, count] of counts) {
    let v = y[token];
    if (v === -Infinity) continue;
    v = Math.fround(v > 0 ? v / r : v * r);
    v = Math.fround(v - Math.fround(f * count));
    y[token] = Math.fround(v - pres);
  }
  return y;
}

/** Zeroes w outside the top-p set: a tie group is kept while the mass strictly above it is < topP · total. */
function topPFilter(y: Float64Array, order: number[], topP: number, w: Float64Array): void {
  const total = w.reduce((a, b) => a + b, 0);
  let above = 0;
  for (let begin = 0, end = 0; begin < order.length; begin = end) {
    let group = 0;
    for (end = begin; end < order.length && y[order[end]] === y[order[begin]]; end++) group += w[order[end]];
    if (!(above < topP * total)) for (let i = begin; i < end; i++) w[order[i]] = 0;
    above += group;
  }
}

function referenceRow(y: Float64Array, row: number, p: NativeSamplingParams, probs: Float64Array, raw: Float64Array): void {
  const vocab = y.length;
  const max = y.reduce((a, b) => Math.max(a, b), -Infinity);
  if (max === -Infinity) return void (probs.fill(NaN), raw.fill(NaN));
  const temperature = param(p.temperature, row, 1);
  if (temperature === 0) {
    const argmax = y.indexOf(max);
    for (let t = 0; t < vocab; t++) (probs[t] = t === argmax ? 1 : 0), (raw[t] = t === argmax ? 0 : -Infinity);
    return;
  }
  const w = y.map((v) => Math.exp((v - max) / temperature));
  const logTotal = Math.log(w.reduce((a, b) => a + b, 0));
  for (let t = 0; t < vocab; t++) raw[t] = Math.log(w[t]) - logTotal;
  const order = Array.from({ length: vocab }, (_, t) => t).filter((t) => y[t] > -Infinity).sort((a, b) => y[b] - y[a] || a - b);
  const topK = param(p.topK, row, 0);
  if (topK > 0 && topK < order.length) {
    const kth = y[order[topK - 1]];
    for (let t = 0; t < vocab; t++) if (y[t] < kth) w[t] = 0;
  }
  const topP = param(p.topP, row, 1);
  if (topP < 1) topPFilter(y, order, topP, w);
  const minP = param(p.minP, row, 0); // the max token's weight is exp(0) = 1
  for (let t = 0; t < vocab; t++) if (w[t] < minP) w[t] = 0;
  const kept = w.reduce((a, b) => a + b, 0);
  for (let t = 0; t < vocab; t++) probs[t] = w[t] / kept;
}

/** The processed distribution of every row of `logits` [B, V] under `options`, by sorting (slow; for tests and benches). */
export function samplingReference(logits: Float32Array, vocab: number, options?: SamplingOptions): SamplingReference {
  const rows = logits.length / vocab;
  const p = nativeSamplingParams('samplingReference', options, rows, vocab);
  const probs = new Float64Array(logits.length); // [B, V]
  const rawLogp = new Float64Array(logits.length); // [B, V]
  for (let r = 0; r < rows; r++) {
    const span = [r * vocab, (r + 1) * vocab] as const;
    referenceRow(penalisedRow(logits.subarray(...span), r, vocab, p), r, p, probs.subarray(...span), rawLogp.subarray(...span));
  }
  return { probs, rawLogp };
}
