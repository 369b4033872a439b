/**
 * `movies-multi`: a seeded multi-respondent recommendation benchmark on a real catalog.
 * Films: American films from the Wikipedia catalog (prust/wikipedia-movie-data) that ReDial users
 * mentioned (mention counts = popularity). Requests: constraint sets (genres, decade, cast member,
 * "like <film>") rendered as short English requests; the latent relevant set is every benchmark film
 * meeting the constraints. Respondents are SIMULATED: each lists 1–10 relevant films drawn without
 * replacement with popularity-skewed, respondent-specific genre tastes.
 */
import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import { checkOptions } from '../options/schema.js';
import { describe, integer, number } from '../validate.js';
import type { TitleYear } from '../text/catalog.js';
import { isCleanTitle } from '../text/title.js';
import { normalizeTitle } from '../text/normalize.js';
import { constraintShape, CONSTRAINT_SHAPES, renderRequest, type MoviesMultiConstraints } from './movies-multi-text.js';
import { mixSeed, mulberry32, pickOne, randomInt, shuffleInPlace, weightedIndex, type Random } from './rng.js';
import type { RecRequest } from './schemas.js';

/** A benchmark film: catalog fields plus its ReDial mention count. */
export interface BenchmarkFilm extends TitleYear {
  genres: string[];
  cast: string[];
  mentions: number;
}

/** Inputs: the full catalog and the popularity list (ReDial `redial-movies.jsonl` rows). */
export interface MoviesMultiSource {
  catalog: ReadonlyArray<TitleYear & { genres?: string[]; cast?: string[] }>;
  popularity: ReadonlyArray<{ title: string; year: number | null; mentions: number }>;
}

/** Two numbers, each checked by `read(name, value)` (named `heldOut[0]`, `heldOut[1]`). */
function pair(def: [number, number], type: string, doc: string, read: (name: string, v: unknown, first: number) => number): opt.Field<[number, number]> {
  return {
    type, doc, default: def,
    read: (v, path, n) => {
      if (!Array.isArray(v) || v.length !== 2) {
        throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(path)} to be a pair [a, b] but received ${describe(v)}`);
      }
      const first = read(`${n.field(path)}[0]`, v[0], -Infinity);
      return [first, read(`${n.field(path)}[1]`, v[1], first)];
    },
  };
}

const checkFilms: opt.Field<number | 'all'> = {
  type: 'integer >= 1 or "all"', default: 'all',
  doc: 'Size of the catalog written for the `notInCatalog` check: the benchmark films, then the other catalog films in source order, '
    + 'up to this many; `"all"` keeps the whole source catalog.',
  read: (v, path, n) => (v === 'all' ? 'all' : integer(n.field(path), v, 1)),
};

export const MOVIES_MULTI_OPTIONS = {
  seed: opt.integer(2026, 'Seed of every random choice.', 0, 2 ** 53 - 1),
  requests: opt.integer(2000, 'Number of requests over all splits.', 1),
  benchmarkFilms: opt.integer(5000, 'Benchmark catalog size: the most-mentioned films kept (all films with a mention if larger).', 10),
  checkFilms,
  heldOut: pair([0.1, 0.1], 'two numbers in [0, 0.5)', 'Fractions of requests in validation and test (the rest is train).',
    (name, v) => number(name, v, (x) => x >= 0 && x < 0.5, 'in [0, 0.5)')),
  relevantSize: pair([5, 60], 'two integers, 1 <= min <= max', 'Bounds on the latent relevant-set size; constraint sets outside are redrawn.',
    (name, v, first) => integer(name, v, Math.max(1, first))),
  maxRespondents: opt.integer(12, 'Most respondents per request (heavy-tailed, P(r) ∝ r^−1.5).', 1),
  maxItems: opt.integer(10, 'Most films per respondent (P(n) ∝ 0.75^(n−1)).', 1),
  seenRate: opt.number(0.3, 'Fraction of requests that name 1–3 relevant films as already seen.', opt.UNIT),
};

/** Options of {@link generateMoviesMulti}. */
export type MoviesMultiOptions = opt.OptionsOf<typeof MOVIES_MULTI_OPTIONS>;

export const MOVIES_MULTI_DEFAULTS = opt.defaultsOf(MOVIES_MULTI_OPTIONS);

type Options = opt.ValuesOf<typeof MOVIES_MULTI_OPTIONS>;

function resolveOptions(options: MoviesMultiOptions): Options {
  return checkOptions(MOVIES_MULTI_OPTIONS, opt.plainNaming('movies-multi options'), options, MOVIES_MULTI_DEFAULTS);
}

/**
 * Joins ReDial popularity onto the catalog (same default-normalised title, year exact, then ±1) and
 * keeps the `limit` most-mentioned films whose titles survive render → parse, ordered by mentions
 * (desc), then title and year.
 */
export function popularFilms(source: MoviesMultiSource, limit: number): BenchmarkFilm[] {
  const byTitle = new Map<string, number[]>();
  source.catalog.forEach((film, i) => {
    const key = normalizeTitle(film.title);
    byTitle.set(key, [...(byTitle.get(key) ?? []), i]);
  });
  const mentions = new Float64Array(source.catalog.length);
  for (const { title, year, mentions: count } of source.popularity) {
    const candidates = year === null ? undefined : byTitle.get(normalizeTitle(title));
    const match = [0, 1, -1].map((d) => candidates?.find((i) => source.catalog[i].year === year! + d)).find((i) => i !== undefined);
    if (match !== undefined) mentions[match] += count;
  }
  const films: BenchmarkFilm[] = [];
  source.catalog.forEach((film, i) => {
    // a title the parser cannot read back (e.g. "61*") could never be matched, so it is left out
    if (mentions[i] > 0 && isCleanTitle(film.title)) films.push({ title: film.title, year: film.year, genres: film.genres ?? [], cast: film.cast ?? [], mentions: mentions[i] });
  });
  films.sort((a, b) => b.mentions - a.mentions || a.title.localeCompare(b.title) || a.year - b.year);
  return films.slice(0, limit);
}

/** Constraint values common enough to build requests from. */
interface Vocabulary {
  genres: string[];
  decades: number[];
  cast: string[];
  anchors: number[];
}

function frequent(values: Iterable<string | number>, minimum: number): (string | number)[] {
  const counts = new Map<string | number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].filter(([, c]) => c >= minimum).map(([v]) => v).sort();
}

function vocabulary(films: readonly BenchmarkFilm[]): Vocabulary {
  return {
    genres: frequent(films.flatMap((f) => f.genres), 40) as string[],
    decades: frequent(films.map((f) => Math.floor(f.year / 10) * 10), 40) as number[],
    cast: frequent(films.flatMap((f) => f.cast), 6) as string[],
    anchors: films.slice(0, 1000).flatMap((f, i) => (f.genres.length > 0 ? [i] : [])),
  };
}

function sampleConstraints(random: Random, shape: string, vocab: Vocabulary, films: readonly BenchmarkFilm[]): MoviesMultiConstraints {
  const c: MoviesMultiConstraints = {};
  if (shape === 'like') {
    const anchor = films[pickOne(random, vocab.anchors)];
    return { like: { title: anchor.title, year: anchor.year } };
  }
  if (shape.includes('genres')) {
    const first = pickOne(random, vocab.genres);
    const second = pickOne(random, vocab.genres);
    c.genres = random() < 0.3 && second !== first ? [first, second].sort() : [first];
  }
  if (shape.includes('decade')) c.decade = pickOne(random, vocab.decades);
  if (shape.includes('cast')) c.cast = pickOne(random, vocab.cast);
  return c;
}

function meets(film: BenchmarkFilm, c: MoviesMultiConstraints, anchor: BenchmarkFilm | undefined): boolean {
  if (c.genres && !c.genres.every((g) => film.genres.includes(g))) return false;
  if (c.decade !== undefined && Math.floor(film.year / 10) * 10 !== c.decade) return false;
  if (c.cast !== undefined && !film.cast.includes(c.cast)) return false;
  if (anchor) {
    if (film === anchor || Math.abs(film.year - anchor.year) > 8) return false;
    return anchor.genres.slice(0, 2).every((g) => film.genres.includes(g));
  }
  return true;
}

/** Indices of the films meeting every constraint (the latent relevant set). */
export function relevantFilms(films: readonly BenchmarkFilm[], c: MoviesMultiConstraints): number[] {
  const anchor = c.like && films.find((f) => f.title === c.like!.title && f.year === c.like!.year);
  if (c.like && !anchor) return [];
  const relevant: number[] = [];
  films.forEach((film, i) => {
    if (meets(film, c, anchor)) relevant.push(i);
  });
  return relevant;
}

/** P(r) ∝ r^−1.5 for r = 1..max (mean ≈ 2.7 for max 12): most threads get a few answers, some many. */
function respondentCount(random: Random, max: number): number {
  const weights = Array.from({ length: max }, (_, r) => (r + 1) ** -1.5);
  return 1 + weightedIndex(random, weights, weights.reduce((a, b) => a + b, 0));
}

/** P(n) ∝ 0.75^(n−1) for n = 1..max (mean ≈ 3.3 for max 10). */
function itemCount(random: Random, max: number): number {
  const weights = Array.from({ length: max }, (_, n) => 0.75 ** n);
  return 1 + weightedIndex(random, weights, weights.reduce((a, b) => a + b, 0));
}

/**
 * One simulated respondent: a popularity exponent α ~ U(0.3, 1.2) and a taste weight per genre
 * (log-normal, σ = 1); films are ranked by Gumbel-top-k on log((mentions+1)^α · Π taste), which is
 * sampling without replacement ∝ that weight, so the list starts with the respondent's favourites.
 */
function respondentItems(random: Random, films: readonly BenchmarkFilm[], pool: readonly number[], count: number): TitleYear[] {
  const alpha = 0.3 + 0.9 * random();
  const taste = new Map<string, number>();
  const keyed = pool.map((i) => {
    let logWeight = alpha * Math.log(films[i].mentions + 1);
    for (const g of films[i].genres) {
      if (!taste.has(g)) taste.set(g, gaussian(random));
      logWeight += taste.get(g)!;
    }
    return { i, key: logWeight - Math.log(-Math.log(random() || Number.MIN_VALUE)) };
  });
  keyed.sort((a, b) => b.key - a.key);
  return keyed.slice(0, count).map(({ i }) => ({ title: films[i].title, year: films[i].year }));
}

function gaussian(random: Random): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function splitOf(index: number, order: readonly number[], o: Options): string {
  const rank = order[index] / order.length;
  if (rank < o.heldOut[0]) return 'validation';
  return rank < o.heldOut[0] + o.heldOut[1] ? 'test' : 'train';
}

/** A shape drawn uniformly, then constraint sets of that shape until the relevant set has an allowed size. */
function drawRequest(random: Random, films: readonly BenchmarkFilm[], vocab: Vocabulary, o: Options) {
  for (let shapes = 0; shapes < 20; shapes++) {
    const shape = pickOne(random, CONSTRAINT_SHAPES);
    for (let attempt = 0; attempt < 200; attempt++) {
      const constraints = sampleConstraints(random, shape, vocab, films);
      const relevant = relevantFilms(films, constraints);
      if (relevant.length >= o.relevantSize[0] && relevant.length <= o.relevantSize[1]) return { constraints, relevant };
    }
  }
  throw new GrpoError('GRPO_VALUE_RANGE', `No constraint set met relevantSize [${o.relevantSize}] in 4000 draws; widen it`);
}

function makeRequest(n: number, films: readonly BenchmarkFilm[], vocab: Vocabulary, o: Options): RecRequest {
  const random = mulberry32(mixSeed(o.seed, n));
  const { constraints, relevant } = drawRequest(random, films, vocab, o);
  const seenCount = random() < o.seenRate ? Math.min(1 + randomInt(random, 3), relevant.length - 1) : 0;
  const seenIdx = shuffleInPlace([...relevant], random).slice(0, seenCount);
  const pool = relevant.filter((i) => !seenIdx.includes(i));
  const seen = seenIdx.map((i) => ({ title: films[i].title, year: films[i].year }));
  const anchor = constraints.like ? [constraints.like] : [];
  const respondents = Array.from({ length: respondentCount(random, o.maxRespondents) }, (_, r) => ({
    id: `r${r + 1}`,
    items: respondentItems(random, films, pool, Math.min(itemCount(random, o.maxItems), pool.length)),
  }));
  return {
    id: `mm-${String(n).padStart(5, '0')}`,
    request: renderRequest(random, constraints, seen),
    seen: [...anchor, ...seen],
    respondents,
    relevant: pool.map((i) => ({ title: films[i].title, year: films[i].year })),
    constraints: { ...constraints, shape: constraintShape(constraints) },
  };
}

/** A generated benchmark: its films, the catalog for the `notInCatalog` check, and the requests. */
export interface MoviesMulti {
  films: BenchmarkFilm[];
  checkCatalog: TitleYear[];
  requests: RecRequest[];
}

/** The benchmark films first, then the rest of the source catalog in order, `size` films at most. */
function checkCatalogOf(source: MoviesMultiSource, films: readonly BenchmarkFilm[], size: number | 'all'): TitleYear[] {
  const benchmark = new Set(films.map((f) => `${f.title}\u0000${f.year}`));
  const rest = source.catalog.filter((f) => !benchmark.has(`${f.title}\u0000${f.year}`)).map(({ title, year }) => ({ title, year }));
  const all = [...films.map(({ title, year }) => ({ title, year })), ...rest];
  return size === 'all' ? all : all.slice(0, Math.max(size, films.length));
}

/**
 * Generates the benchmark: the benchmark films, the check catalog and `requests` records, each with its
 * split (validation/test/train by a seeded permutation of request numbers). Deterministic in (source, options).
 */
export function generateMoviesMulti(source: MoviesMultiSource, options: MoviesMultiOptions = {}): MoviesMulti {
  const o = resolveOptions(options);
  const films = popularFilms(source, o.benchmarkFilms);
  const vocab = vocabulary(films);
  const order = shuffleInPlace(Array.from({ length: o.requests }, (_, i) => i), mulberry32(mixSeed(o.seed, -1)));
  const requests = Array.from({ length: o.requests }, (_, n) => ({ ...makeRequest(n, films, vocab, o), split: splitOf(n, order, o) }));
  return { films, checkCatalog: checkCatalogOf(source, films, o.checkFilms), requests };
}
