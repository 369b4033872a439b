import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateMoviesMulti, relevantFilms, type BenchmarkFilm } from '../lib/data/movies-multi.js';
import { loadMoviesMulti, loadMoviesMultiCatalogs, loadMoviesMultiFilms, loadMoviesMultiSource, MOVIES_MULTI_DIR } from '../lib/data/movies-multi-files.js';
import { moviesMultiStats } from '../lib/data/movies-multi-stats.js';
import { renderItems } from '../lib/rewards/items.js';
import { rankRewards } from '../lib/rewards/recommend.js';
import { unpackRealData } from './helpers/real-data.js';

const source = loadMoviesMultiSource(unpackRealData(['movies-catalog-1900-1949.jsonl', 'movies-catalog.jsonl', 'redial-movies.jsonl']));
const key = (f: { title: string; year: number }) => `${f.title}\u0000${f.year}`;

describe('generateMoviesMulti', () => {
  const small = generateMoviesMulti(source, { requests: 120, seed: 7 });
  const films = new Map(small.films.map((f) => [key(f), f]));

  it('is deterministic in its seed', () => {
    expect(generateMoviesMulti(source, { requests: 120, seed: 7 }).requests).toEqual(small.requests);
    expect(generateMoviesMulti(source, { requests: 120, seed: 8 }).requests).not.toEqual(small.requests);
  });

  it('keeps the films with ReDial popularity, most mentioned first, and honours benchmarkFilms', () => {
    expect(small.films.length).toBeGreaterThan(4000);
    expect(small.films.every((f, i) => f.mentions > 0 && (i === 0 || small.films[i - 1].mentions >= f.mentions))).toBe(true);
    expect(generateMoviesMulti(source, { requests: 5, benchmarkFilms: 1500 }).films).toHaveLength(1500);
  });

  it('relevant = every benchmark film meeting the constraints (checked with a plain filter), minus seen films', () => {
    for (const request of small.requests) {
      const c = request.constraints as { genres?: string[]; decade?: number; cast?: string; like?: { title: string; year: number } };
      const seen = new Set(request.seen.map((s) => key(s as { title: string; year: number })));
      const plain = c.like
        ? relevantFilms(small.films, c).map((i) => small.films[i])
        : small.films.filter((f: BenchmarkFilm) =>
            (c.genres ?? []).every((g) => f.genres.includes(g)) &&
            (c.decade === undefined || Math.floor(f.year / 10) * 10 === c.decade) &&
            (c.cast === undefined || f.cast.includes(c.cast)),
          );
      expect(request.relevant!.map(key).sort()).toEqual(plain.map(key).filter((k) => !seen.has(k)).sort());
    }
  });

  it('respondents (1–12) list 1–10 distinct relevant, unseen films; splits partition the requests', () => {
    for (const request of small.requests) {
      expect(request.respondents.length).toBeGreaterThanOrEqual(1);
      expect(request.respondents.length).toBeLessThanOrEqual(12);
      const relevant = new Set(request.relevant!.map(key));
      for (const respondent of request.respondents) {
        const items = respondent.items.map(key);
        expect(items.length).toBeGreaterThanOrEqual(1);
        expect(items.length).toBeLessThanOrEqual(10);
        expect(new Set(items).size).toBe(items.length);
        expect(items.every((k) => relevant.has(k) && films.has(k))).toBe(true);
      }
    }
    const splits = moviesMultiStats(small.requests, small.films).requestsPerSplit;
    expect(splits).toEqual({ train: 96, validation: 12, test: 12 });
  });

  it('checkFilms sizes the notInCatalog catalog: benchmark films first, then the rest of the source', () => {
    const all = new Set(source.catalog.map(key));
    expect(new Set(small.checkCatalog.map(key))).toEqual(all);
    const cut = generateMoviesMulti(source, { requests: 5, checkFilms: 6000 });
    expect(cut.checkCatalog).toHaveLength(6000);
    expect(cut.checkCatalog.slice(0, cut.films.length).map(key)).toEqual(cut.films.map(key));
    expect(generateMoviesMulti(source, { requests: 5, checkFilms: 10 }).checkCatalog).toHaveLength(cut.films.length);
  });

  it('rejects unknown options and impossible sizes', () => {
    expect(() => generateMoviesMulti(source, { request: 5 } as never)).toThrow(/did you mean "requests"/);
    expect(() => generateMoviesMulti(source, { requests: 3, relevantSize: [5000, 6000] })).toThrow(/relevantSize/);
  });
});

describe('shipped data/movies-multi', () => {
  it('is exactly what the generator produces with the default options', () => {
    const fresh = generateMoviesMulti(source);
    for (const split of ['train', 'validation', 'test'] as const) {
      expect(loadMoviesMulti(split)).toEqual(fresh.requests.filter((r) => r.split === split));
    }
    expect(loadMoviesMultiFilms()).toEqual(fresh.films);
    const stats = JSON.parse(readFileSync(`${MOVIES_MULTI_DIR}/stats.json`, 'utf8'));
    expect(stats).toEqual(JSON.parse(JSON.stringify(moviesMultiStats(fresh.requests, fresh.films))));
  });

  it('scores a respondent list perfectly against both catalogs, and flags a film outside the full catalog', () => {
    const { benchmark, full } = loadMoviesMultiCatalogs();
    expect(full.size).toBeGreaterThan(36_000);
    const [request] = loadMoviesMulti('test');
    const items = request.respondents[0].items;
    for (const catalog of [benchmark, full]) {
      const { hits } = rankRewards(renderItems(items), request, { k: items.length, target: 'respondent', catalog });
      expect([...hits]).toEqual(items.map(() => 1));
    }
    const made = rankRewards('1. Not A Real Film At All (2003)', request, { catalog: full });
    expect(made.reasons).toEqual(['notInCatalog']);
  });
});
