import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Catalog, formatCatalogIndex } from '../text/catalog.js';
import { readUserTextSync } from '../user-files.js';
import { arrayAt, countAt, integerAt, objectAt, stringAt, stringElement } from './fields.js';
import { readJsonlSync, type RecordParser } from './jsonl.js';
import type { BenchmarkFilm, MoviesMulti, MoviesMultiSource } from './movies-multi.js';
import { moviesMultiStats } from './movies-multi-stats.js';
import { parseCatalogRecord, parseRequestRecord, type RecRequest } from './schemas.js';

/** Splits of the shipped benchmark. */
export type MoviesMultiSplit = 'train' | 'validation' | 'test';

export const MOVIES_MULTI_SPLITS: readonly MoviesMultiSplit[] = Object.freeze(['train', 'validation', 'test']);

/** Folder of the shipped benchmark (`data/movies-multi/` at the package root). */
export const MOVIES_MULTI_DIR = fileURLToPath(new URL('../../data/movies-multi/', import.meta.url));

/** What a movies-multi folder holds, for the error when one of its files cannot be read. */
const MOVIES_MULTI_FOLDER = 'a movies-multi folder: train/validation/test.jsonl, catalog.jsonl and catalog-index.tsv (grpo data movies-multi writes one)';

/** Requests of one split of a `movies-multi` folder (the shipped one by default). */
export function loadMoviesMulti(split: MoviesMultiSplit, dir = MOVIES_MULTI_DIR): RecRequest[] {
  return readJsonlSync(join(dir, `${split}.jsonl`), parseRequestRecord, `the ${split} requests of ${MOVIES_MULTI_FOLDER}`);
}

/** Record parser for benchmark films: title, year, genres, cast, mentions. */
export const parseFilmRecord: RecordParser<BenchmarkFilm> = (value, at) => {
  const record = objectAt(value, at, 'record');
  const strings = (key: string) => arrayAt(record, key, at, (v, p) => stringElement(v, at, p));
  return { title: stringAt(record, 'title', at), year: integerAt(record, 'year', at), genres: strings('genres'), cast: strings('cast'), mentions: countAt(record, 'mentions', at) };
};

/** The benchmark films (`catalog.jsonl`). */
export function loadMoviesMultiFilms(dir = MOVIES_MULTI_DIR): BenchmarkFilm[] {
  return readJsonlSync(join(dir, 'catalog.jsonl'), parseFilmRecord, `the benchmark films of ${MOVIES_MULTI_FOLDER}`);
}

/**
 * Catalogs for the `notInCatalog` check: `benchmark` = the benchmark films; `full` = every film of
 * both shared catalog files, from the compact normalised index `catalog-index.tsv` (default
 * normalisation only, so use it with `mode: "default"`).
 */
export function loadMoviesMultiCatalogs(dir = MOVIES_MULTI_DIR): { benchmark: Catalog; full: Catalog } {
  return {
    benchmark: Catalog.fromEntries(loadMoviesMultiFilms(dir)),
    full: Catalog.fromIndex(readUserTextSync(join(dir, 'catalog-index.tsv'), `the catalog index of ${MOVIES_MULTI_FOLDER}`)),
  };
}

const SOURCE_FILES = 'movies-catalog-1900-1949.jsonl, movies-catalog.jsonl, redial-movies.jsonl';

/** Reads the generator's inputs from a folder holding the shared data files (`../shared/data`). */
export function loadMoviesMultiSource(sharedDataDir: string): MoviesMultiSource {
  const catalog = ['movies-catalog-1900-1949.jsonl', 'movies-catalog.jsonl'].flatMap((name) =>
    readJsonlSync(join(sharedDataDir, name), parseCatalogRecord, `the movie catalog of a shared data folder (${SOURCE_FILES})`).map((r) => ({
      title: r.title,
      year: r.year,
      genres: (r.genres as string[] | undefined) ?? [],
      cast: (r.cast as string[] | undefined) ?? [],
    })),
  );
  const popularity = readJsonlSync(join(sharedDataDir, 'redial-movies.jsonl'), (value) => value as MoviesMultiSource['popularity'][number],
    `the film mention counts of a shared data folder (${SOURCE_FILES})`);
  return { catalog, popularity };
}

function jsonl(records: readonly unknown[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

/**
 * Writes a generated benchmark: `<split>.jsonl`, `catalog.jsonl` (benchmark films), `catalog-index.tsv`
 * (the check catalog's normalised (title, year) index) and `stats.json`. Returns the statistics.
 */
export function writeMoviesMulti(dir: string, generated: MoviesMulti) {
  mkdirSync(dir, { recursive: true });
  for (const split of MOVIES_MULTI_SPLITS) writeFileSync(join(dir, `${split}.jsonl`), jsonl(generated.requests.filter((r) => r.split === split)));
  const films = generated.films.map(({ title, year, genres, cast, mentions }) => ({ title, year, genres, cast, mentions }));
  writeFileSync(join(dir, 'catalog.jsonl'), jsonl(films));
  writeFileSync(join(dir, 'catalog-index.tsv'), formatCatalogIndex(generated.checkCatalog));
  const stats = moviesMultiStats(generated.requests, generated.films);
  writeFileSync(join(dir, 'stats.json'), JSON.stringify(stats, null, 2) + '\n');
  return stats;
}
