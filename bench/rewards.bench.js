// Rank rewards for a GRPO step: 48 requests × 8 completions × 20 items, checked against the full
// 36k-film catalog (both movie catalog files, bundled gzipped in test/fixtures/data/). Run: npx tsc -p tsconfig.json && node bench/rewards.bench.js
import Benchmark from 'benchmark';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import os from 'node:os';
import { Catalog, mulberry32, rankRewards, rankRewardsBatch, renderItems } from '../dist/index.js';

const GROUPS = 48;
const CANDIDATES = 8;
const K = 20;
const RESPONDENTS = 5;

function readCatalog() {
  const files = ['movies-catalog.jsonl', 'movies-catalog-1900-1949.jsonl'];
  return files.flatMap((name) =>
    gunzipSync(readFileSync(new URL(`../test/fixtures/data/${name}.gz`, import.meta.url)))
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line)),
  );
}

function makeBatch(films, random) {
  const pick = () => films[Math.floor(random() * films.length)];
  const requests = Array.from({ length: GROUPS }, () => ({
    seen: [pick().title],
    respondents: Array.from({ length: RESPONDENTS }, () => ({ items: Array.from({ length: 5 }, pick) })),
  }));
  const completions = requests.map((request) =>
    Array.from({ length: CANDIDATES }, () => {
      const truth = request.respondents.flatMap((r) => r.items);
      // about a quarter of the list from the ground truth, one year off now and then, one made-up title
      const items = Array.from({ length: K - 1 }, () => (random() < 0.25 ? truth[Math.floor(random() * truth.length)] : pick()));
      items.push({ title: `Not A Film ${Math.floor(random() * 1e6)}`, year: 2001 });
      return `Here are my picks:\n\n${renderItems(items.map((f) => ({ title: f.title, year: f.year + (random() < 0.1 ? 1 : 0) })))}`;
    }),
  );
  return { requests, completions };
}

const films = readCatalog();
const catalog = Catalog.fromEntries(films);
const indexStart = performance.now();
catalog.has('', 0); // builds the default-normalisation index once
const indexMs = performance.now() - indexStart;
// a fixed stream: every run scores the same batch
const { requests, completions } = makeBatch(films, mulberry32(2026));
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const rows = [];

for (const target of ['union', 'mean']) {
  const options = { k: K, target, shape: 'dcgTail', catalog };
  const coldStart = performance.now();
  const fast = rankRewardsBatch(completions, requests, options);
  const coldMs = performance.now() - coldStart;
  // reference: one unprepared rankRewards call per completion must give the same [G, S, K] values
  completions.forEach((group, g) =>
    group.forEach((text, s) => {
      const reference = rankRewards(text, requests[g], options).rewards;
      reference.forEach((v, k) => {
        if (v !== fast.rewards[(g * CANDIDATES + s) * K + k]) throw new Error(`batch ≠ reference at [${g}, ${s}, ${k}]`);
      });
    }),
  );
  const suite = new Benchmark(`rankRewardsBatch ${target}`, () => rankRewardsBatch(completions, requests, options), { minSamples: 30 });
  suite.run();
  const sample = [...suite.stats.sample].sort((a, b) => a - b).map((s) => s * 1e3);
  rows.push({
    target,
    'rewards shape': `[${GROUPS}, ${CANDIDATES}, ${K}]`,
    'catalog keys': catalog.size,
    'first call ms': coldMs.toFixed(2),
    'min ms': sample[0].toFixed(2),
    'p50 ms': quantile(sample, 0.5).toFixed(2),
    'p90 ms': quantile(sample, 0.9).toFixed(2),
    'mean ms': (suite.stats.mean * 1e3).toFixed(2),
    'completions with rank-1 reward': fast.rewards.reduce((n, v, i) => n + (i % K === 0 && v > 0 ? 1 : 0), 0),
  });
}
console.table(rows);
console.log(`catalog index build: ${indexMs.toFixed(1)} ms for ${films.length} films; ${os.cpus()[0].model} ×${os.cpus().length}, load ${os.loadavg()[0].toFixed(2)}, node ${process.version}`);
