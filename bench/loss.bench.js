// Policy loss forward + backward over 1M tokens (B = 512, T = 2048). The fast result is checked against the
// float64 TS reference before it is timed. Advantages: bench/advantage.bench.js.
// Run: npx tsc -p tsconfig.json && GRPO_NATIVE_ADDON=... node bench/loss.bench.js
import { getThreads, mulberry32, policyLoss, policyLossReference, policyLossSync, resolveLossOptions } from '../dist/index.js';
import { measureRoofs, readRoofRow } from './roof.js';
import { assertClose, asyncCopyCost, onceMs, timeMs } from './timing.js';

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
  const out = new Float32Array(rows * cols); // [B, T] gradLogp, reused across calls as a trainer would
  const { ms, best } = timeMs(() => policyLossSync(input, { ...options, out }), 21);
  const bytes = rows * cols * (4 * 4 + 1 + 4); // logp, old, ref, advantage, mask read; gradient written
  return { name: 'loss fwd+bwd, 1M tokens (clip + k3 KL)', ms, best, bytes, referenceMs: reference.ms, roofs };
}

const roofs = await measureRoofs();
const results = [benchLoss(roofs)];
console.log(`threads ${getThreads()}, ${roofs.cpuPath}, read roof ${roofs.readGBs.toFixed(1)} GB/s`);
console.table(results.map(readRoofRow));
const { shape, ...lossArrays } = lossInputs(512, 2048);
await asyncCopyCost('policyLoss 512x2048 (clip + k3 KL)', (x, a) => (a ? policyLoss : policyLossSync)({ shape, ...x }, { beta: 0.04 }), lossArrays);
