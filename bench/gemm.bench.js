// GEMM throughput on the LM-head shapes, on 1 and 2 threads, against the FMA roof measured in
// the same run. Each product is checked against the float64 triple loop (first and last rows)
// before it is timed. Where the CPU has AVX512_BF16, the bf16-product variant is timed too (AMX tiles
// where the CPU has AMX-BF16; the header line names the kernel). Run: npx tsc -p tsconfig.json && node bench/gemm.bench.js
import { cpuPath, getThreads, matmul, matmulBf16Kernel, matmulBf16Native, matmulSync, setThreads } from '../dist/index.js';
import { gemmReference } from '../dist/reference/gemm.js';
import { measureFmaGflops } from './roof.js';
import { asyncCopyCost, fixed, once } from './timing.js';

// [name, transA, transB, m, n, k, beta]: the fused LM head's forward tile and its two backward products
const SHAPES = [
  ['NT logits = h·Wᵀ', false, true, 2048, 32768, 512, 0],
  ['NT tile 512×2048', false, true, 512, 2048, 512, 0],
  ['NN gradHidden += G·W', false, false, 512, 512, 2048, 1],
  ['TN gradWeight += Gᵀ·h', true, false, 2048, 512, 512, 1],
];
const CHECK_ROWS = 4;
// max |C − reference| allowed, relative to max |reference|: float32 sums vs bf16-rounded inputs (8 bits)
const TOLERANCE = { float32: 1e-5, bf16: 2e-2 };

function randomFloats(n, seed) {
  let state = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out[i] = state / 4294967296 - 0.5;
  }
  return out;
}

function operands([, transA, transB, m, n, k, beta]) {
  const a = randomFloats(m * k, m + k), b = randomFloats(k * n, n + k); // [m, k] or [k, m]; [k, n] or [n, k]
  const layout = { transA, transB, m, n, k, alpha: 1, beta, lda: transA ? m : k, ldb: transB ? k : n, ldc: n };
  return { a, b, out: randomFloats(m * n, 7), layout }; // out: C [m, n]
}

function run({ a, b, out, layout: l }, bf16) {
  const { m, n, k, ...options } = l;
  return matmulSync(a, b, { m, n, k }, { ...options, out, bf16 });
}

// Rows [i0, i0 + rows) of C through the reference, from the C the fast call started with.
function referenceRows({ a, b, layout: l }, before, i0, rows) {
  const aRows = l.transA ? a.subarray(i0) : a.subarray(i0 * l.lda);
  const c = Float32Array.from(before.subarray(i0 * l.ldc, (i0 + rows) * l.ldc));
  return gemmReference(aRows, b, c, { ...l, m: rows });
}

// Relative max error of the first and last rows; throws beyond the precision's tolerance.
function verify(ops, precision) {
  const l = ops.layout, before = Float32Array.from(ops.out);
  run(ops, precision === 'bf16');
  let worst = 0, scale = 0;
  for (const i0 of [0, l.m - CHECK_ROWS]) {
    const expected = referenceRows(ops, before, i0, CHECK_ROWS);
    for (let i = 0; i < expected.length; i++) {
      worst = Math.max(worst, Math.abs(ops.out[i0 * l.ldc + i] - expected[i]));
      scale = Math.max(scale, Math.abs(expected[i]));
    }
  }
  const relative = worst / scale;
  if (!(relative <= TOLERANCE[precision])) throw new Error(`matmul (${precision}) differs from the reference by ${relative} (relative)`);
  return relative;
}

// Median and best of at least MIN_RUNS calls lasting MIN_MS in all (best: least disturbed by other load).
const MIN_RUNS = 5, MIN_MS = 2000;
function timeRuns(fn) {
  const times = [];
  for (let total = 0; times.length < MIN_RUNS || total < MIN_MS;) total += times[times.push(once(fn)) - 1];
  times.sort((x, y) => x - y);
  return { median: times[times.length >> 1], best: times[0], runs: times.length };
}

// The roof is measured right before each product, so both see the same machine load.
function row(shape, precision, threads) {
  const ops = operands(shape), l = ops.layout;
  const relError = verify(ops, precision);
  const roof = measureFmaGflops();
  const t = timeRuns(() => run(ops, precision === 'bf16'));
  const gflops = (ms) => (2 * l.m * l.n * l.k) / ms / 1e6;
  return { product: shape[0], 'm×n×k': `${l.m}×${l.n}×${l.k}`, precision, threads, 'median ms': fixed(t.median), runs: t.runs,
    'GFLOP/s median': fixed(gflops(t.median), 1), 'GFLOP/s best': fixed(gflops(t.best), 1), 'FMA roof': fixed(roof, 0),
    'best of roof': `${fixed((100 * gflops(t.best)) / roof, 0)}%`, relError: relError.toExponential(1) };
}

function rowsFor(threads) {
  setThreads(threads);
  const precisions = matmulBf16Native() ? ['float32', 'bf16'] : ['float32'];
  return precisions.flatMap((precision) => SHAPES.map((shape) => row(shape, precision, threads)));
}

const defaultThreads = getThreads();
console.log(`cpu path ${cpuPath()}, bf16 products ${matmulBf16Native() ? `native (${matmulBf16Kernel()})` : 'unavailable'}; GFLOP/s = 2·m·n·k / time;`
  + ' FMA roof (float32) measured before each row, same thread count');
console.table([1, 2].flatMap(rowsFor));
setThreads(defaultThreads);
// The NT tile's own shape (it was 256 × 4096 before the fused head's tile became 512 × 2048; this call kept the old one).
const { a: gemmA, b: gemmB, out: gemmC, layout: { m: tileM, n: tileN, k: tileK } } = operands(SHAPES[1]);
await asyncCopyCost(`matmul NT ${tileM}x${tileN}x${tileK}`,
  (x, a) => (a ? matmul : matmulSync)(x.a, x.b, { m: tileM, n: tileN, k: tileK }, { transB: true, out: x.c }), { a: gemmA, b: gemmB, c: gemmC });
