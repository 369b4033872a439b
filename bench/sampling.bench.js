// Sampling at [384, 32768] and [64, 151936]: plain, top-p 0.9, top-k 50 + top-p 0.95. Each mode's
// processed distribution is checked against the sort-based float64 reference (a few rows) before it
// is timed. Run: npx tsc -p tsconfig.json && node bench/sampling.bench.js
import { cpuPath, getThreads, sample, sampleSync, samplingProbsSync } from '../dist/index.js';
import { samplingReference } from '../dist/reference/sampling.js';
import { measureRoofs } from './roof.js';
import { asyncCopyCost, fixed, measure, once } from './timing.js';

const CHECK_ROWS = 4; // the sort-based reference on every row would take seconds per call

/** Logits like a language model's: a normal bulk (σ = 2) with a few strong tokens per row. */
function modelLikeLogits(rows, vocab, seed) {
  let state = seed >>> 0;
  const uniform = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) + 0.5) / 4294967296;
  const out = new Float32Array(rows * vocab); // [B, V]
  for (let i = 0; i < out.length; i++) out[i] = 2 * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  for (let r = 0; r < rows; r++) for (let k = 0; k < 8; k++) out[r * vocab + Math.floor(uniform() * vocab)] += 8 + k;
  return out;
}

function verify(logits, vocab, options) {
  const head = logits.subarray(0, CHECK_ROWS * vocab);
  const ours = samplingProbsSync(head, vocab, options);
  const ref = samplingReference(head, vocab, options).probs;
  let worst = 0;
  for (let i = 0; i < ours.length; i++) {
    if ((ours[i] > 0) !== (ref[i] > 0)) throw new Error(`support differs from the reference at ${i} (${JSON.stringify(options)})`);
    worst = Math.max(worst, Math.abs(ours[i] - ref[i]));
  }
  if (worst > 1e-6) throw new Error(`probabilities differ from the reference by ${worst}`);
  const { tokens } = sampleSync(head, vocab, options);
  tokens.forEach((t, r) => { if (!(ref[r * vocab + t] > 0)) throw new Error(`row ${r} drew token ${t} outside the support`); });
  return worst;
}

const MODES = [
  ['plain', { seed: 1 }],
  ['top-p 0.9', { seed: 2, topP: 0.9 }],
  ['top-k 50 + top-p 0.95', { seed: 3, topK: 50, topP: 0.95 }],
];

function rowsFor(rows, vocab, roofs) {
  const logits = modelLikeLogits(rows, vocab, rows + vocab);
  const floorMs = logits.byteLength / roofs.readGBs / 1e6;
  return MODES.map(([mode, options]) => {
    const maxError = verify(logits, vocab, options);
    const head = logits.subarray(0, CHECK_ROWS * vocab);
    const refMs = (once(() => samplingReference(head, vocab, options)) * rows) / CHECK_ROWS;
    const t = measure(`${mode} ${rows}x${vocab}`, () => sampleSync(logits, vocab, options));
    return { mode, shape: `${rows}x${vocab}`, ms: fixed(t.ms), rme: `±${fixed(t.rme, 1)}%`, 'rows/s': fixed(rows / t.ms * 1e3, 0),
      GBs: fixed(logits.byteLength / t.ms / 1e6, 1), 'x read floor': fixed(t.ms / floorMs), 'vs sort ref': `${fixed(refMs / t.ms, 0)}×`,
      maxError: maxError.toExponential(1) };
  });
}

const roofs = await measureRoofs();
console.log(`cpu path ${cpuPath()}, ${getThreads()} threads; read roof ${fixed(roofs.readGBs, 1)} GB/s`);
console.log('x read floor = time / (logits bytes / read roof); vs sort ref = the float64 sort-based reference, timed on 4 rows and scaled');
console.table([...rowsFor(384, 32768, roofs), ...rowsFor(64, 151936, roofs)]);
await asyncCopyCost('sample top-p 0.9, 64x151936', (x, a) => (a ? sample : sampleSync)(x.logits, 151936, { seed: 2, topP: 0.9 }),
  { logits: modelLikeLogits(64, 151936, 64 + 151936) });
