// Bootstrap over requests: 2,000 resamples of 5,000 requests × 3 metrics (target: under a second),
// plus the paired bootstrap of two runs and a full recommendation evaluation of the validation split.
// Run: npx tsc -p tsconfig.json && node bench/eval.bench.js
import Benchmark from 'benchmark';
import os from 'node:os';
import { bootstrap, evaluateRecommendations, loadMoviesMulti, mulberry32, pairedBootstrap, ratioOf, renderItems, resampleRatios } from '../dist/index.js';

const REQUESTS = 5000;
const RESAMPLES = 2000;
const SEED = 0;

/** Three metrics of one run: a per-request recall, an NDCG and a rows metric (several respondents per request). */
function makeSeries(random) {
  const recall = { sum: new Float64Array(REQUESTS), count: new Float64Array(REQUESTS).fill(1) };
  const ndcg = { sum: new Float64Array(REQUESTS), count: new Float64Array(REQUESTS).fill(1) };
  const rows = { sum: new Float64Array(REQUESTS), count: new Float64Array(REQUESTS) };
  for (let r = 0; r < REQUESTS; r++) {
    recall.sum[r] = random();
    ndcg.sum[r] = random() * recall.sum[r];
    rows.count[r] = 1 + Math.floor(random() * 6);
    rows.sum[r] = random() * rows.count[r];
  }
  return [recall, ndcg, rows];
}

/** Plain reference: the same request draws, each resample built as arrays and reduced with ratioOf. */
function referenceDraws(series, resamples, seed) {
  const random = mulberry32(seed);
  const n = series[0].sum.length;
  const out = series.map(() => new Float64Array(resamples));
  for (let b = 0; b < resamples; b++) {
    const drawn = Array.from({ length: n }, () => Math.floor(random() * n));
    series.forEach((s, m) => {
      out[m][b] = ratioOf({ sum: Float64Array.from(drawn, (i) => s.sum[i]), count: Float64Array.from(drawn, (i) => s.count[i]) });
    });
  }
  return out;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

function measure(name, fn, shape) {
  const bench = new Benchmark(name, fn, { minSamples: 10 });
  bench.run();
  const sample = [...bench.stats.sample].sort((a, b) => a - b).map((s) => s * 1e3);
  return { case: name, shape, 'min ms': sample[0].toFixed(1), 'p50 ms': quantile(sample, 0.5).toFixed(1), 'p90 ms': quantile(sample, 0.9).toFixed(1), samples: sample.length };
}

const series = makeSeries(mulberry32(1));
const other = makeSeries(mulberry32(2));
const fast = resampleRatios(series, { resamples: RESAMPLES, seed: SEED });
const reference = referenceDraws(series, RESAMPLES, SEED);
fast.forEach((draws, m) =>
  draws.forEach((v, b) => {
    if (Math.abs(v - reference[m][b]) > 1e-12) throw new Error(`bootstrap draw ≠ reference at metric ${m}, resample ${b}: ${v} vs ${reference[m][b]}`);
  }),
);

// one list per validation request: a few of its relevant films among popular ones
const validation = loadMoviesMulti('validation');
const random = mulberry32(3);
const lists = validation.map((request) => {
  const pool = [...(request.relevant ?? []), ...validation.flatMap((r) => r.respondents[0].items).slice(0, 400)];
  return renderItems(Array.from({ length: 20 }, () => pool[Math.floor(random() * pool.length)]));
});

const rows = [
  measure('bootstrap', () => bootstrap(series, { resamples: RESAMPLES, seed: SEED }), `${RESAMPLES} × ${REQUESTS} requests × 3 metrics`),
  measure('pairedBootstrap', () => pairedBootstrap(series[0], other[0], { resamples: RESAMPLES, seed: SEED }), `${RESAMPLES} × ${REQUESTS} requests, 2 runs`),
  measure('evaluateRecommendations', () => evaluateRecommendations(lists, validation, { ks: [5, 10, 20] }), `${validation.length} requests, K = 5, 10, 20`),
];
console.table(rows);
console.log(`draws checked against the plain reference (${RESAMPLES} × 3); ${os.cpus()[0].model} ×${os.cpus().length}, load ${os.loadavg()[0].toFixed(2)}, node ${process.version}`);
