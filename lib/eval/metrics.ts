/**
 * Recall@K and NDCG@K of one generated list per request, against each respondent row (averaged over
 * rows, and within requests then over requests), the union of the respondents, and the latent
 * relevant set where records keep one; plus the popularity of hits vs of the relevant set.
 */
import { GrpoError } from '../errors.js';
import type { Catalog, TitleYear } from '../text/catalog.js';
import { itemKey, TITLE_NORMALIZATIONS } from '../text/normalize.js';
import { ITEM_KEYS } from '../text/title.js';
import type { RewardRequest } from '../rewards/recommend.js';
import { dcgDiscount } from '../rewards/shapes.js';
import * as opt from '../options/schema.js';
import { checkOptions } from '../options/schema.js';
import { integer, length } from '../validate.js';
import { ratioOf, type RequestSeries } from './bootstrap.js';
import { logPopularity, popularityIndex, type PopularityEntry, type PopularityIndex } from './popularity.js';
import { EVAL_SEMANTICS, scoreList, type HitRules, type ListHits, type ScoredList } from './rec-hits.js';

/** A request to evaluate: respondents, seen films, and optionally the latent relevant set. */
export interface RecEvalRequest extends RewardRequest {
  relevant?: readonly TitleYear[];
}

const ks: opt.Field<readonly number[]> = {
  type: 'integers in [1, 10000], at least one', doc: 'Cut-offs K evaluated.', default: [20],
  read: (v, path, n) => {
    if (!Array.isArray(v) || v.length === 0) {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(path)} to be a non-empty array of cut-offs but received ${typeof v}`);
    }
    v.forEach((k, i) => integer(`${n.field(path)}[${i}]`, k, 1, 10_000));
    return v;
  },
};

export const REC_EVAL_OPTIONS = {
  ks,
  semantics: opt.choice(EVAL_SEMANTICS, 'default', 'Parsing and matching rules (see the semantics above): the training matcher of the rewards, or Rank-GRPO\'s published evaluation.'),
  normalization: opt.choice(TITLE_NORMALIZATIONS, 'default', 'Title normalisation of the default semantics.'),
  yearTolerance: opt.integer(2, 'Largest |year difference| that still matches.', 0, 100),
  key: opt.choice(ITEM_KEYS, 'year', 'Items told apart by `"year"` ("Title (Year)" lines) or `"creator"` ("Title (Creator)" lines; the default semantics only).'),
  catalog: opt.opaque<Catalog>('Catalog', '`notInCatalog` check (default) or catalog filter (upstream; needs a catalog built from entries, since '
    + 'upstream compares raw strings and `Catalog.fromIndex` answers only default-normalised lookups); none: no check.'),
  popularity: opt.opaque<Iterable<PopularityEntry> | PopularityIndex>('[{ title, year, popularity }] or a popularityIndex(...)',
    'Film popularity (e.g. movies-multi `mentions`) for the popularity metrics; without it they are NaN.'),
};

/** Options of {@link evaluateRecommendations}. */
export type RecEvalOptions = opt.OptionsOf<typeof REC_EVAL_OPTIONS>;

export const REC_EVAL_DEFAULTS = opt.defaultsOf(REC_EVAL_OPTIONS);

/**
 * - `row*`: mean over every (request, respondent) row, the upstream convention (requests with many
 *   respondents weigh more); `request*`: mean over a request's rows, then over requests.
 * - `union*`: against the deduplicated union of a request's respondents.
 * - `relevant*`: against the latent relevant set (requests without one are left out).
 * - `*LogPopularity`: mean ln(1 + popularity) of the valid recommended items in the top K, of those
 *   that hit the relevant set (the union where there is none), and of the relevant set itself.
 */
export const REC_METRICS = Object.freeze([
  'rowRecall',
  'rowNdcg',
  'requestRecall',
  'requestNdcg',
  'unionRecall',
  'unionNdcg',
  'relevantRecall',
  'relevantNdcg',
  'recommendedLogPopularity',
  'hitLogPopularity',
  'truthLogPopularity',
] as const);

export type RecMetric = (typeof REC_METRICS)[number];

/** The metrics at one cut-off K. */
export interface RecMetricsAtK {
  k: number;
  /** value of each metric (Σ sum / Σ count of its series; NaN when nothing was defined) */
  values: Record<RecMetric, number>;
  /** per-request series of each metric, for {@link bootstrap} and {@link pairedBootstrap} */
  series: Record<RecMetric, RequestSeries>;
}

/** Recall@K and NDCG@K of one list against one ground truth. */
export interface RankMetrics {
  recall: number;
  ndcg: number;
}

/**
 * Recall@K = (hits in the first K) / truthSize; NDCG@K = DCG@K / IDCG, DCG = Σ_{i<K} hit_i·d_i with
 * d_0 = 1, d_i = 1/log2(i+2); the ideal list has min(K, truthSize, idealCap) hits. NaN for an empty
 * ground truth; NDCG 0 when the ideal is empty (the upstream "no items" case).
 */
export function rankMetrics(hits: ArrayLike<number>, truthSize: number, k: number, idealCap = Infinity): RankMetrics {
  if (truthSize <= 0) return { recall: NaN, ndcg: NaN };
  let found = 0;
  let dcg = 0;
  for (let i = 0; i < Math.min(k, hits.length); i++) {
    found += hits[i];
    dcg += hits[i] * dcgDiscount(i);
  }
  let ideal = 0;
  for (let i = 0; i < Math.min(k, truthSize, idealCap); i++) ideal += dcgDiscount(i);
  return { recall: found / truthSize, ndcg: ideal > 0 ? dcg / ideal : 0 };
}

type Resolved = Required<Omit<RecEvalOptions, 'catalog' | 'popularity'>> & { catalog?: Catalog; popularity?: PopularityIndex };

function resolve(options: RecEvalOptions | undefined): Resolved {
  const o = checkOptions(REC_EVAL_OPTIONS, opt.plainNaming('evaluation options'), options, REC_EVAL_DEFAULTS);
  const popularity = o.popularity === undefined || o.popularity instanceof Map ? o.popularity : popularityIndex(o.popularity);
  return { ...o, popularity };
}

function emptySeries(requests: number): Record<RecMetric, RequestSeries> {
  const entries = REC_METRICS.map((name) => [name, { sum: new Float64Array(requests), count: new Float64Array(requests) }]);
  return Object.fromEntries(entries) as Record<RecMetric, RequestSeries>;
}

function add(series: RequestSeries, request: number, value: number, weight = 1): void {
  if (Number.isNaN(value)) return;
  series.sum[request] += value * weight;
  series.count[request] += weight;
}

/** Respondents' items, duplicates of the same (title, year) dropped (the matcher also dedupes). */
function unionOf(request: RecEvalRequest): TitleYear[] {
  const union = new Map<string, TitleYear>();
  for (const item of request.respondents.flatMap((r) => r.items)) union.set(itemKey(item.title, item.year), item);
  return [...union.values()];
}

function addRows(s: Record<RecMetric, RequestSeries>, g: number, list: ScoredList, request: RecEvalRequest, k: number): void {
  const rows = request.respondents.map((r) => hitsMetrics(list.hitsAgainst(r.items), k)).filter((m) => !Number.isNaN(m.recall));
  for (const row of rows) {
    add(s.rowRecall, g, row.recall);
    add(s.rowNdcg, g, row.ndcg);
  }
  if (rows.length === 0) return;
  add(s.requestRecall, g, rows.reduce((sum, row) => sum + row.recall, 0) / rows.length);
  add(s.requestNdcg, g, rows.reduce((sum, row) => sum + row.ndcg, 0) / rows.length);
}

function hitsMetrics(found: ListHits, k: number): RankMetrics {
  return rankMetrics(found.hits, found.truthSize, k, found.idealCap);
}

/** Popularity of the valid top-K items, of those that hit `truth`, and of `truth` itself. */
function addPopularity(
  s: Record<RecMetric, RequestSeries>,
  g: number,
  list: ScoredList,
  truth: { items: readonly TitleYear[]; hits: Float32Array },
  k: number,
  o: Resolved,
): void {
  if (!o.popularity) return;
  const index = o.popularity;
  const popularityOf = (title: string, year: number | null) => logPopularity(index, title, year, o.yearTolerance) ?? NaN;
  for (let i = 0; i < Math.min(k, list.items.length); i++) {
    if (!list.valid[i]) continue;
    const value = popularityOf(list.items[i].title, list.items[i].year);
    add(s.recommendedLogPopularity, g, value);
    if (truth.hits[i] > 0) add(s.hitLogPopularity, g, value);
  }
  for (const item of truth.items) add(s.truthLogPopularity, g, popularityOf(item.title, item.year));
}

function evaluateAt(list: ScoredList, request: RecEvalRequest, g: number, k: number, s: Record<RecMetric, RequestSeries>, o: Resolved): void {
  addRows(s, g, list, request, k);
  const union = unionOf(request);
  const unionHits = list.hitsAgainst(union);
  const unionMetrics = hitsMetrics(unionHits, k);
  add(s.unionRecall, g, unionMetrics.recall);
  add(s.unionNdcg, g, unionMetrics.ndcg);
  const relevantHits = request.relevant ? list.hitsAgainst(request.relevant) : undefined;
  if (relevantHits) {
    const relevant = hitsMetrics(relevantHits, k);
    add(s.relevantRecall, g, relevant.recall);
    add(s.relevantNdcg, g, relevant.ndcg);
  }
  addPopularity(s, g, list, { items: request.relevant ?? union, hits: (relevantHits ?? unionHits).hits }, k, o);
}

function checkRequest(request: RecEvalRequest, g: number): void {
  if (!Array.isArray(request?.respondents) || request.respondents.length === 0) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected requests[${g}].respondents to be a non-empty array`);
  }
}

/**
 * Evaluates one generated list per request (e.g. greedy decoding) at every K of `options.ks`.
 * @example
 * const [at20] = evaluateRecommendations(['1. Heat (1995)'], [{ respondents: [{ items: [{ title: 'Heat', year: 1995 }] }] }]);
 * at20.values.rowRecall // 1
 */
export function evaluateRecommendations(
  completions: readonly string[],
  requests: readonly RecEvalRequest[],
  options?: RecEvalOptions,
): RecMetricsAtK[] {
  const o = resolve(options);
  if (!Array.isArray(requests) || !Array.isArray(completions)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected arrays of completions and requests but received ${typeof completions} and ${typeof requests}`);
  }
  length('completions', completions, requests.length, '[requests] (one list per request)');
  const rules: HitRules = { semantics: o.semantics, normalization: o.normalization, yearTolerance: o.yearTolerance, key: o.key, catalog: o.catalog };
  const results = o.ks.map((k) => ({ k, series: emptySeries(requests.length) }));
  requests.forEach((request, g) => {
    checkRequest(request, g);
    if (typeof completions[g] !== 'string') throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected completions[${g}] to be a string`);
    const shared = o.semantics === 'upstreamTruncateFirst' ? undefined : scoreList(completions[g], request.seen ?? [], rules, Infinity);
    for (const { k, series } of results) evaluateAt(shared ?? scoreList(completions[g], request.seen ?? [], rules, k), request, g, k, series, o);
  });
  return results.map(({ k, series }) => ({
    k,
    series,
    values: Object.fromEntries(REC_METRICS.map((name) => [name, ratioOf(series[name])])) as Record<RecMetric, number>,
  }));
}
