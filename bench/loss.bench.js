// Policy loss forward + backward over 1M tokens (B = 512, T = 2048), rank-wise advantages
// (G = 48, S = 8, K = 20) with their token scatter over T = 512, and group advantages over 64K
// rewards. Each fast result is checked against the float64 TS reference before it is timed.
// Run: npx tsc -p tsconfig.json && GRPO_NATIVE_ADDON=... node bench/loss.bench.js
import {
  getThreads, groupAdvantagesSync, mulberry32, groupsOf, normalizeGroupsReference, itemTokenRowReference, policyLossReference,
  policyLoss, policyLossSync, rankAdvantagesSync, rankCellsOf, resolveLossOptions, tokenAdvantagesSync,
} from '../dist/index.js';
import { asyncCopyCost } from './timing.js';
import { measureRoofs } from './roof.js';

/** Median and best milliseconds of `repeats` calls after two warm-up calls (best: on a shared machine, the least disturbed run). */
function timeMs(fn, repeats) {
  fn();
  fn();
  const times = Array.from({ length: repeats }, () => {
    const start = process.hrtime.bigint();
    fn();
    return Number(process.hrtime.bigint() - start) / 1e6;
  }).sort((a, b) => a - b);
  return { ms: times[Math.floor(repeats / 2)], best: times[0] };
}

function onceMs(fn) {
  const start = process.hrtime.bigint();
  const result = fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result };
}

function maxAbsDiff(a, b) {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]) / (1e-6 + 1e-4 * Math.abs(b[i])));
  return worst;
}

function assertClose(name, actual, expected) {
  const worst = maxAbsDiff(actual, expected);
  if (!(worst <= 1)) throw new Error(`${name}: native result differs from the reference (worst scaled error ${worst})`);
}

function lossInputs(rows, cols) {
  const random = mulberry32(7);
  const n = rows * cols;
  const logp = Float32Array.from({ length: n }, () => -3 * random());
  const oldLogp = Float32Array.from(logp, (x) => x + 0.4 * (random() - 0.5));
  const refLogp = Float32Array.from(logp, (x) => x + 0.4 * (random() - 0.5));
  const advantages = Float32Array.from({ length: n }, () => 2 * random() - 1);
  const mask = new Uint8Array(n);
  for (let b = 0; b < rows; b++) mask.fill(1, b * cols, b * cols + Math.floor(cols * (0.5 + 0.5 * random())));
  return { shape: [rows, cols], logp, oldLogp, refLogp, advantages, mask };
}

function benchLoss(roofs) {
  const rows = 512;
  const cols = 2048;
  const input = lossInputs(rows, cols);
  const options = { beta: 0.04, aggregation: 'localTokenMean' };
  const fast = policyLossSync(input, options);
  const reference = onceMs(() => policyLossReference({ ...input, rows, cols }, resolveLossOptions(options)));
  assertClose('loss', [fast.loss], [reference.result.loss]);
  assertClose('gradLogp', fast.gradLogp, reference.result.grad);
  const { ms, best } = timeMs(() => policyLossSync(input, options), 21);
  const bytes = rows * cols * (4 * 4 + 1 + 4); // logp, old, ref, advantage, mask read; gradient written
  return { name: 'loss fwd+bwd, 1M tokens (clip + k3 KL)', ms, best, bytes, referenceMs: reference.ms, roofs };
}

function benchRank(roofs) {
  const groups = 48;
  const candidates = 8;
  const ranks = 20;
  const cols = 512;
  const rows = groups * candidates;
  const random = mulberry32(9);
  const rewards = Float32Array.from({ length: rows * ranks }, () => (random() < 0.3 ? 1 : 0));
  const segments = Int32Array.from({ length: rows * cols }, (_, i) => Math.floor((i % cols) / 24) - (i % cols > 500 ? 99 : 0));
  segments.forEach((s, i) => { if (s < -1) segments[i] = -1; });
  const mask = Uint8Array.from(segments, (s) => (s >= 0 ? 1 : 0));
  const eosPositions = Int32Array.from({ length: rows }, (_, b) => (b % 3 === 0 ? -1 : 480));
  const o = { scale: 'group', stdEpsilon: 1e-4, singletonGroup: 'nan', nanRewards: 'asZero' };
  const run = () => {
    const { advantages } = rankAdvantagesSync(rewards, { ...o, candidates, ranks });
    return tokenAdvantagesSync({ advantages, mask, segments, eosPositions }, { ranks }).advantages;
  };
  const fast = run();
  const shaping = { enabled: true, endOfList: 0.1, extraToken: -0.1, earlyStop: -0.1 };
  const reference = onceMs(() => {
    const a = normalizeGroupsReference(rewards, rankCellsOf(groups, candidates, ranks), o).advantages;
    const out = new Float64Array(rows * cols);
    for (let b = 0; b < rows; b++) {
      const slice = (x, w) => Array.from(x.subarray(b * w, (b + 1) * w));
      out.set(itemTokenRowReference(slice(a, ranks), slice(segments, cols), slice(mask, cols), eosPositions[b], ranks, shaping), b * cols);
    }
    return out;
  });
  assertClose('rank + token advantages', fast, reference.result);
  const { ms, best } = timeMs(run, 51);
  const bytes = rows * ranks * 8 + rows * cols * (4 + 1 + 4);
  return { name: 'rank advantages G48 S8 K20 + scatter T512', ms, best, bytes, referenceMs: reference.ms, roofs };
}

function benchGroup(roofs) {
  const n = 65536;
  const random = mulberry32(11);
  const rewards = Float32Array.from({ length: n }, () => Math.round(4 * random()) / 4);
  const o = { scale: 'group', stdEpsilon: 1e-4, singletonGroup: 'zero', nanRewards: 'exclude' };
  const fast = groupAdvantagesSync(rewards, { ...o, groupSize: 16 }).advantages;
  const reference = onceMs(() => normalizeGroupsReference(rewards, groupsOf(n, 16), o).advantages);
  assertClose('group advantages', fast, reference.result);
  const { ms, best } = timeMs(() => groupAdvantagesSync(rewards, { ...o, groupSize: 16 }), 201);
  return { name: 'group advantages, 64K rewards (G = 16)', ms, best, bytes: n * 8, referenceMs: reference.ms, roofs };
}

const roofs = await measureRoofs();
const results = [benchLoss(roofs), benchRank(roofs), benchGroup(roofs)];
console.log(`threads ${getThreads()}, ${roofs.cpuPath}, read roof ${roofs.readGBs.toFixed(1)} GB/s`);
console.table(results.map((r) => ({
  kernel: r.name,
  'median ms': r.ms.toFixed(3),
  'best ms': r.best.toFixed(3),
  'GB/s (best)': (r.bytes / r.best / 1e6).toFixed(1),
  'of read roof (best)': `${((100 * r.bytes) / r.best / 1e6 / r.roofs.readGBs).toFixed(0)}%`,
  'TS reference ms': r.referenceMs.toFixed(1),
  'x TS reference': (r.referenceMs / r.ms).toFixed(0),
})));
const { shape, ...lossArrays } = lossInputs(512, 2048);
await asyncCopyCost('policyLoss 512x2048 (clip + k3 KL)', (x, a) => (a ? policyLoss : policyLossSync)({ shape, ...x }, { beta: 0.04 }), lossArrays);
