// Plain float64 reference of the policy loss (native/kernels/loss/loss*.cc): forward and analytic
// backward, one token at a time. Tests check its gradient against finite differences of its
// loss, and the native kernel against it.
import type { ResolvedLossOptions } from '../kernels/loss.js';

export interface LossReferenceInput {
  rows: number;
  cols: number;
  logp: ArrayLike<number>;
  oldLogp?: ArrayLike<number>;
  refLogp?: ArrayLike<number>;
  /** [B, T] or [B] */
  advantages: ArrayLike<number>;
  mask: ArrayLike<number>;
  segments?: ArrayLike<number>;
  entropy?: ArrayLike<number>;
}

interface Term { value: number; dRatio: number; dLogp: number }

const clampTo = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), hi);

function clipTerm(r: number, a: number, o: ResolvedLossOptions): Term {
  const lo = 1 - (o.epsilonLow as number);
  const hi = 1 + ((o.epsilonHigh ?? o.epsilonLow) as number);
  const capped = o.delta !== null && r > (o.delta as number);
  const rd = capped ? (o.delta as number) : r;
  let t: Term = { value: -rd * a, dRatio: capped ? 0 : -a, dLogp: 0 };
  const clipped = -clampTo(r, lo, hi) * a;
  if (clipped > t.value) t = { value: clipped, dRatio: r >= lo && r <= hi ? -a : 0, dLogp: 0 };
  if (o.dualClipC !== null && a < 0 && t.value > -a * (o.dualClipC as number)) t = { value: -a * (o.dualClipC as number), dRatio: 0, dLogp: 0 };
  return t;
}

function surrogate(r: number, a: number, logp: number, phi: number, o: ResolvedLossOptions): Term {
  const eh = (o.epsilonHigh ?? o.epsilonLow) as number;
  switch (o.lossType) {
    case 'clip': return clipTerm(r, a, o);
    case 'cispoCap': { const w = Math.min(r, o.cispoCap as number); return { value: -w * a * logp, dRatio: 0, dLogp: -w * a }; }
    case 'cispoClamp': { const w = clampTo(r, 1 - (o.epsilonLow as number), 1 + eh); return { value: -w * a * logp, dRatio: 0, dLogp: -w * a }; }
    case 'sapo': {
      const tau = (a > 0 ? o.sapoTauPos : o.sapoTauNeg) as number;
      const s = 1 / (1 + Math.exp(-tau * (r - 1)));
      return { value: -s * 4 / tau * a, dRatio: -4 * a * s * (1 - s), dLogp: 0 };
    }
    case 'vespo': return { value: -phi * a * logp, dRatio: 0, dLogp: -phi * a };
    case 'gpg': return { value: -a * logp, dRatio: 0, dLogp: -a };
    default: return { value: 0, dRatio: 0, dLogp: 0 };
  }
}

/** KL estimator of (logp, ref) and its derivative in logp. */
export function klReference(logp: number, ref: number, o: Pick<ResolvedLossOptions, 'klEstimator' | 'klClamp'> & { klK2Gradient?: unknown }): { value: number; dLogp: number } {
  const lr = logp - ref;
  let k = { value: lr, dLogp: 1 };
  if (o.klEstimator === 'abs') k = { value: Math.abs(lr), dLogp: Math.sign(lr) };
  if (o.klEstimator === 'k2') k = { value: 0.5 * lr * lr, dLogp: lr };
  if (o.klEstimator === 'k3') {
    const x = o.klClamp === 'verl' ? clampTo(-lr, -20, 20) : -lr;
    k = { value: Math.exp(x) - x - 1, dLogp: Math.abs(lr) > 20 && o.klClamp === 'verl' ? 0 : 1 - Math.exp(x) };
  }
  const clampsValue = o.klClamp === 'openrlhf' || (o.klClamp === 'verl' && o.klEstimator === 'k3');
  if (clampsValue && Math.abs(k.value) > 10) k = { value: Math.sign(k.value) * 10, dLogp: 0 };
  return o.klK2Gradient ? { value: k.value, dLogp: lr } : k;
}

function vespoPhi(s: number, k: number, lambda: number): number {
  const logW = clampTo(s, Math.log(1e-8), 20);
  const phi = Math.exp(lambda + k * logW - lambda * Math.exp(logW));
  return Number.isFinite(phi) ? phi : 0;
}

function entropyThreshold(x: LossReferenceInput, q: number): number {
  if (q >= 1 || !x.entropy) return -Infinity;
  const values = Array.from(x.mask).flatMap((m, i) => (m ? [x.entropy![i]] : [])).sort((a, b) => a - b);
  const position = (1 - q) * (values.length - 1);
  const lo = Math.floor(position);
  return values[lo] + (values[Math.ceil(position)] - values[lo]) * (position - lo);
}

function rowWeight(o: ResolvedLossOptions, n: number, total: number, x: LossReferenceInput): number {
  const ga = o.accumulationSteps as number;
  const sequences = o.sequenceCount ?? Math.max(x.rows, 1);
  switch (o.aggregation) {
    case 'globalTokenMean': return 1 / (o.tokenCount ?? Math.max(total, 1));
    case 'localTokenMean': return 1 / Math.max(total, 1) / ga;
    case 'seqMeanTokenMean': return 1 / (Math.max(n, 1) * sequences * ga);
    case 'seqMeanTokenSum': return 1 / (sequences * ga);
    case 'tokenSumOverBL': return 1 / (sequences * (o.maxCompletionLength as number) * ga);
    case 'allPositionsLengthWeighted': return n / (sequences * Math.max(x.cols, 1) * ga);
    default: return 1 / ((o.lossScaleFactor ?? Math.max(x.cols, 1)) * ga);
  }
}

/** Loss and d(loss)/d(logp) [B, T] in float64; numItems = K at the item level. */
export function policyLossReference(x: LossReferenceInput, o: ResolvedLossOptions, numItems = 0): { loss: number; grad: Float64Array } {
  const { rows, cols } = x;
  const grad = new Float64Array(rows * cols);
  const perToken = x.advantages.length === rows * cols;
  const adv = (b: number, i: number) => (perToken ? x.advantages[i] : x.advantages[b]);
  const d = (i: number) => (x.oldLogp ? x.logp[i] - x.oldLogp[i] : 0);
  const binOf = (i: number) => (o.isLevel === 'item' ? clampTo(x.segments![i], 0, numItems) : 0);
  const total = Array.from(x.mask).reduce((s, m) => s + (m ? 1 : 0), 0);
  const threshold = entropyThreshold(x, o.topEntropyQuantile as number);
  const beta = o.beta as number;
  const v = o.vespo as { kPos: number; lambdaPos: number; kNeg: number; lambdaNeg: number };
  let loss = 0;
  for (let b = 0; b < rows; b++) {
    const tokens: number[] = [];
    for (let t = 0; t < cols; t++) if (x.mask[b * cols + t]) tokens.push(b * cols + t);
    const weight = rowWeight(o, tokens.length, total, x);
    const sum = new Map<number, number>();
    const count = new Map<number, number>();
    for (const i of tokens) {
      sum.set(binOf(i), (sum.get(binOf(i)) ?? 0) + d(i));
      count.set(binOf(i), (count.get(binOf(i)) ?? 0) + 1);
    }
    const vespoSum = tokens.reduce((s, i) => s + clampTo(d(i), -20, 20), 0);
    const binGrad = new Map<number, number>();
    // allPositionsLengthWeighted (TRL luspo's [B, T] mean): padding carries loss and gradient too.
    const positions = o.aggregation === 'allPositionsLengthWeighted' ? Array.from({ length: cols }, (_, t) => b * cols + t) : tokens;
    for (const i of positions) {
      const bin = binOf(i);
      const w = o.isLevel === 'token' ? d(i) : (sum.get(bin) ?? 0) / Math.max(count.get(bin) ?? 0, 1);
      const limit = o.logRatioClamp as number | null;
      const pass = limit === null || Math.abs(w) <= limit ? 1 : 0;
      const r = Math.exp(limit === null ? w : clampTo(w, -limit, limit));
      const a = adv(b, i);
      const phi = a >= 0 ? vespoPhi(vespoSum, v.kPos, v.lambdaPos) : vespoPhi(vespoSum, v.kNeg, v.lambdaNeg);
      const term = surrogate(r, a, x.logp[i], phi, o);
      const keep = x.mask[i] ? (!x.entropy || x.entropy[i] >= threshold ? 1 : 0) : (o.topEntropyQuantile as number) >= 1 ? 1 : 0;
      const kl = beta > 0 ? klReference(x.logp[i], x.refLogp![i], o) : { value: 0, dLogp: 0 };
      const bias = o.klBiasCorrection ? r : 1;
      loss += weight * (keep * term.value + beta * kl.value * bias);
      const routed = weight * (keep * term.dRatio + (o.klBiasCorrection ? beta * kl.value : 0)) * r * pass;
      grad[i] = weight * (keep * term.dLogp + beta * kl.dLogp * bias);
      if (o.isLevel === 'sequence' || o.isLevel === 'item') binGrad.set(bin, (binGrad.get(bin) ?? 0) + routed);
      else grad[i] += routed;
    }
    for (const i of tokens) grad[i] += (binGrad.get(binOf(i)) ?? 0) / count.get(binOf(i))!;
    if (o.lossType === 'geoMean') loss += geoMeanRow(x, o, tokens, (i) => adv(b, i), d, grad);
  }
  return { loss, grad };
}

/** verl geo_mean (GMPO) policy term of one row, added to grad; returns its loss share. */
function geoMeanRow(x: LossReferenceInput, o: ResolvedLossOptions, tokens: number[], adv: (i: number) => number,
  d: (i: number) => number, grad: Float64Array): number {
  const lo = -(o.epsilonLow as number);
  const hi = (o.epsilonHigh ?? o.epsilonLow) as number;
  const clipped = (i: number) => {
    const a = adv(i);
    const dc = clampTo(d(i), lo, hi);
    return a > 0 ? Math.min(d(i), dc) : a < 0 ? Math.max(d(i), dc) : 0;
  };
  const denominator = tokens.length + 1e-8;
  const ratio = Math.exp(tokens.reduce((s, i) => s + clipped(i), 0) / denominator);
  const value = -tokens.reduce((s, i) => s + adv(i), 0) / denominator * ratio;
  const weight = 1 / ((o.sequenceCount ?? Math.max(x.rows, 1)) * (o.accumulationSteps as number));
  for (const i of tokens) {
    const passes = (adv(i) > 0 && d(i) <= hi) || (adv(i) < 0 && d(i) >= lo);
    if (passes) grad[i] += weight * value / denominator;
  }
  return weight * value;
}
