// Rank-wise advantages (G = 48, S = 8, K = 20) with their token scatter over T = 512, and group advantages
// over 64K rewards. Each fast result is checked against the float64 TS reference before it is timed.
// Run: npx tsc -p tsconfig.json && GRPO_NATIVE_ADDON=... node bench/advantage.bench.js
import {
  getThreads, groupAdvantagesSync, mulberry32, groupsOf, normalizeGroupsReference, itemTokenRowReference, rankAdvantagesSync,
  rankCellsOf, tokenAdvantagesSync,
} from '../dist/index.js';
import { measureRoofs, readRoofRow } from './roof.js';
import { assertClose, onceMs, timeMs } from './timing.js';

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
  const out = new Float32Array(n); // [B] advantages, reused across calls as a trainer would
  const { ms, best } = timeMs(() => groupAdvantagesSync(rewards, { ...o, groupSize: 16, out }), 201);
  return { name: 'group advantages, 64K rewards (G = 16)', ms, best, bytes: n * 8, referenceMs: reference.ms, roofs };
}

const roofs = await measureRoofs();
const results = [benchRank(roofs), benchGroup(roofs)];
console.log(`threads ${getThreads()}, ${roofs.cpuPath}, read roof ${roofs.readGBs.toFixed(1)} GB/s`);
console.table(results.map(readRoofRow));
