#!/usr/bin/env node
// Regenerates the movies-multi benchmark from the shared real data.
// Usage: npx tsc -p tsconfig.json && node scripts/generate-movies-multi.js [--shared ../shared/data] [--out data/movies-multi]
//        [--seed 2026] [--requests 2000] [--films 5000] [--check-films all]
import { parseArgs } from 'node:util';
import { generateMoviesMulti, loadMoviesMultiSource, writeMoviesMulti } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    shared: { type: 'string', default: '../shared/data' },
    out: { type: 'string', default: 'data/movies-multi' },
    seed: { type: 'string', default: '2026' },
    requests: { type: 'string', default: '2000' },
    films: { type: 'string', default: '5000' },
    'check-films': { type: 'string', default: 'all' },
  },
});
const source = loadMoviesMultiSource(values.shared);
const checkFilms = values['check-films'] === 'all' ? 'all' : Number(values['check-films']);
const options = { seed: Number(values.seed), requests: Number(values.requests), benchmarkFilms: Number(values.films), checkFilms };
const generated = generateMoviesMulti(source, options);
const stats = writeMoviesMulti(values.out, generated);
console.log(JSON.stringify({ options, ...stats }, null, 2));
