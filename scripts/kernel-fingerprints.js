// Bitwise fingerprints of the policy loss, group advantages and sampling on adversarial inputs (tails of every
// length, clip and KL boundaries, ±0, NaN padding, every option family): one line per call, `name sha256`. Diff
// two addons (GRPO_NATIVE_ADDON) or thread counts to show a kernel change kept the bits; output-hashes.js is the
// whole-library check on smaller shapes. Needs `npm run build:ts`.  Usage: node scripts/kernel-fingerprints.js [threads]
import { createHash } from 'node:crypto';
import * as grpo from '../dist/index.js';

const threads = Number(process.argv[2] || 0);
if (threads) grpo.setThreads(threads);
function digest(value) {
  const h = createHash('sha256');
  const feed = (v) => {
    if (ArrayBuffer.isView(v)) h.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    else if (Array.isArray(v)) v.forEach(feed);
    else if (v && typeof v === 'object') Object.keys(v).sort().forEach((k) => (h.update(k), feed(v[k])));
    else h.update(String(Object.is(v, -0) ? '-0' : v));
  };
  feed(value);
  return h.digest('hex').slice(0, 16);
}
let s = 12345;
const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 0.5) / 4294967296;
const lines = [];
const put = (name, fn) => { try { lines.push(`${name} ${digest(fn())}`); } catch (e) { lines.push(`${name} error ${e.code}`); } };

// policy loss: shapes with tails of every size, adversarial values
const special = [0, -0, 0.2, -0.2, Math.log(0.8), Math.log(1.2), 20, -20, 25, -25, 1e-30, -87, 3];
function lossInput(B, T, perToken) {
  const n = B * T;
  const logp = Float32Array.from({ length: n }, () => -6 * rnd());
  const pick = () => special[Math.floor(rnd() * special.length)];
  const oldLogp = Float32Array.from(logp, (x) => (rnd() < 0.15 ? x - pick() : x + 0.8 * (rnd() - 0.5)));
  const refLogp = Float32Array.from(logp, (x) => (rnd() < 0.15 ? x - pick() : x + 2 * (rnd() - 0.5)));
  const advantages = Float32Array.from({ length: perToken ? n : B }, () => (rnd() < 0.1 ? [0, -0, 1, -1][Math.floor(rnd() * 4)] : 4 * rnd() - 2));
  const mask = Uint8Array.from({ length: n }, () => (rnd() < 0.8 ? 1 : 0));
  const entropy = Float32Array.from({ length: n }, () => 3 * rnd());
  const segments = Int32Array.from({ length: n }, (_, i) => Math.floor((i % T) / 5) % 4 - (rnd() < 0.05 ? 1 : 0));
  // padding carries NaN where nothing reads it
  for (let i = 0; i < n; i++) if (!mask[i] && rnd() < 0.3) logp[i] = NaN;
  return { shape: [B, T], logp, oldLogp, refLogp, advantages, mask, entropy, segments };
}
const variants = [
  {}, { beta: 0.04 }, { beta: 0.04, aggregation: 'localTokenMean' }, { beta: 0.1, klEstimator: 'k1' }, { beta: 0.1, klEstimator: 'k2' },
  { beta: 0.1, klEstimator: 'abs' }, { beta: 0.1, klClamp: 'verl' }, { beta: 0.1, klClamp: 'openrlhf' }, { beta: 0.1, klBiasCorrection: true },
  { beta: 0.1, klK2Gradient: true }, { delta: 1.5, dualClipC: 3 }, { logRatioClamp: 0.3, beta: 0.04 }, { epsilonHigh: 0.28 },
  { aggregation: 'seqMeanTokenMean', beta: 0.04 }, { aggregation: 'seqMeanTokenSum' }, { aggregation: 'tokenSumOverBL', maxCompletionLength: 50 },
  { topEntropyQuantile: 0.5, beta: 0.04 }, { isLevel: 'sequence', beta: 0.04 }, { isLevel: 'sequenceToken', beta: 0.04 },
  { isLevel: 'item', numItems: 3, beta: 0.04 }, { aggregation: 'allPositionsLengthWeighted', beta: 0.04 },
];
for (const [B, T] of [[5, 1], [7, 15], [9, 16], [6, 23], [4, 40], [3, 257], [8, 2047]]) {
  for (const perToken of [true, false]) {
    const input = lossInput(B, T, perToken);
    variants.forEach((v, k) => {
      const inp = { ...input };
      if (v.aggregation === 'allPositionsLengthWeighted') inp.logp = inp.logp.map((x) => (Number.isNaN(x) ? -1 : x));
      put(`loss ${B}x${T} ${perToken ? 'tok' : 'row'} v${k}`, () => grpo.policyLossSync(inp, v));
    });
  }
}
for (const [name, p] of Object.entries(grpo.presets)) {
  const input = lossInput(16, 300, true);
  put(`loss preset ${name}`, () => grpo.policyLossSync(input, { ...p.loss, tokenCount: 3000, maxCompletionLength: 300, sequenceCount: 16 }));
}
// advantages
for (const n of [1, 15, 16, 31, 512, 513, 4096, 65536, 65536 + 48]) for (const g of [1, 2, 3, 8, 16]) {
  if (n % g) continue;
  const r = Float32Array.from({ length: n }, () => (rnd() < 0.05 ? NaN : rnd() < 0.3 ? Math.round(4 * rnd()) / 4 : 3 * rnd() - 1));
  const q = Float32Array.from({ length: n }, () => Math.round(4 * rnd()) / 4);
  for (const scale of ['group', 'batch', 'none']) for (const singletonGroup of ['zero', 'raw', 'nan']) for (const nanRewards of ['exclude', 'asZero']) {
    const o = { groupSize: g, scale, singletonGroup, nanRewards, stdEpsilon: 1e-4 };
    put(`adv ${n}/${g} ${scale} ${singletonGroup} ${nanRewards}`, () => grpo.groupAdvantagesSync(r, o));
    put(`adv q ${n}/${g} ${scale} ${singletonGroup} ${nanRewards}`, () => grpo.groupAdvantagesSync(q, o));
  }
}
// sampling
for (const [rows, V] of [[6, 1000], [5, 32768], [3, 50000]]) {
  const logits = new Float32Array(rows * V);
  for (let i = 0; i < logits.length; i++) logits[i] = 2 * Math.sqrt(-2 * Math.log(rnd())) * Math.cos(2 * Math.PI * rnd());
  for (let r = 0; r < rows; r++) for (let k = 0; k < 8; k++) logits[r * V + Math.floor(rnd() * V)] += 8 + k;
  for (let i = 0; i < 50; i++) logits[Math.floor(rnd() * logits.length)] = -Infinity;
  for (const [m, o] of Object.entries({ plain: {}, p9: { topP: 0.9 }, p5: { topP: 0.5 }, p99: { topP: 0.999 }, k50: { topK: 50 }, kp: { topK: 50, topP: 0.95 },
    minp: { minP: 0.05 }, t07: { temperature: 0.7, topP: 0.9 }, t3: { temperature: 3, topP: 0.9 } })) {
    for (const seed of [1, 2, 3]) put(`sample ${rows}x${V} ${m} ${seed}`, () => grpo.sampleSync(logits, V, { ...o, seed }));
    put(`probs ${rows}x${V} ${m}`, () => grpo.samplingProbsSync(logits, V, o));
  }
}
console.log(lines.join('\n'));
