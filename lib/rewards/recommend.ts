import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import { checkOptions } from '../options/schema.js';
import { integer, length } from '../validate.js';
import { Catalog, type TitleYear } from '../text/catalog.js';
import { TITLE_NORMALIZATIONS } from '../text/normalize.js';
import type { SeenEntry } from '../text/records.js';
import { ITEM_KEYS } from '../text/title.js';
import { parseItems } from './items.js';
import { lengthReward } from './length.js';
import {
  checkContext,
  checkItems,
  groundTruth,
  addHits,
  itemTitles,
  type CheckContext,
  type GroundTruth,
  type InvalidReason,
  type MatchRules,
} from './match.js';
import type { ParsedItem } from './parsed-item.js';
import { RANK_SHAPES, shapeRewards } from './shapes.js';

/**
 * Whose items are the ground truth.
 * - `"respondent"`: one respondent's items (Rank-GRPO rows; pick it with `respondent`).
 * - `"union"` (ReMaRk): every respondent's items, deduplicated after normalisation.
 * - `"mean"`: the average over respondents of each respondent's hit indicator, so an item named by
 *   more respondents is worth more.
 */
export type RankTarget = 'respondent' | 'union' | 'mean';

export const RANK_TARGETS: readonly RankTarget[] = Object.freeze(['respondent', 'union', 'mean']);

/** A request as the rewards need it (the data layer's records have more fields). */
export interface RewardRequest {
  seen?: readonly SeenEntry[];
  respondents: ReadonlyArray<{ items: readonly TitleYear[] }>;
}

/** A Catalog instance (the notInCatalog check) or none. */
const catalogOption: opt.Field<Catalog | undefined> = {
  type: 'Catalog', doc: 'Catalog for the `notInCatalog` check; without one the check is off.', default: undefined, defaultDoc: 'none',
  read: (v, path, n) => {
    if (!(v instanceof Catalog)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected a Catalog for ${n.field(path)} but received ${typeof v}`);
    return v;
  },
};

export const RANK_REWARD_OPTIONS = {
  k: opt.integer(20, 'Number of ranks K scored (upstream `rec_num`; items beyond K earn nothing).', 1, 10_000),
  target: opt.choice(RANK_TARGETS, 'union', 'Whose items are the ground truth: `"respondent"` (one respondent\'s, Rank-GRPO rows), '
    + '`"union"` (ReMaRk: every respondent\'s, deduplicated after normalisation) or `"mean"` (the average over respondents of each one\'s hit indicator).'),
  respondent: opt.integer(0, 'Index of the respondent whose items are the ground truth when `target` is "respondent".', 0),
  shape: opt.choice(RANK_SHAPES, 'hit', 'Hits → rewards: `"hit"` (upstream `exp_inf`): R_k = h_k; `"dcgTail"` (upstream `log_decay`): R_k = Σ_{j≥k} h_j·d_j, d_1 = 1, d_j = 1/log2(j+1) (TV9).'),
  mode: opt.choice(['default', 'rankGrpo'] as const, 'default', '`"rankGrpo"` reproduces upstream parsing and matching exactly (raw seen/catalog checks, no duplicate check).'),
  normalization: opt.choice(TITLE_NORMALIZATIONS, 'default', 'Title normalisation of the default mode.'),
  yearTolerance: opt.integer(2, 'Largest |year difference| that still matches.', 0, 100),
  key: opt.choice(ITEM_KEYS, 'year', 'What tells items of one title apart: `"year"` (films, "Title (Year)" lines, the year rule) or `"creator"` '
    + '(books, music: "Title (Creator)" lines; requests, seen lists and catalog entries hold `creatorTitle(title, creator)` with year 0).'),
  catalog: catalogOption,
};

/** Options of the rank rewards. */
export type RankRewardOptions = opt.OptionsOf<typeof RANK_REWARD_OPTIONS>;

/** Options with every default filled in. */
export type ResolvedRankOptions = opt.ValuesOf<typeof RANK_REWARD_OPTIONS>;

export const RANK_REWARD_DEFAULTS: Readonly<ResolvedRankOptions> = opt.defaultsOf(RANK_REWARD_OPTIONS);

/** Validates options and fills defaults. */
export function resolveRankOptions(options: RankRewardOptions = {}): ResolvedRankOptions {
  return checkOptions(RANK_REWARD_OPTIONS, opt.plainNaming('rank reward options'), options, RANK_REWARD_DEFAULTS);
}

/** Rewards of one completion. */
export interface RankRewardResult {
  /** rewards [K] */
  rewards: Float32Array;
  /** hits [K]: 0/1 per rank, or the fraction of respondents hit for `target: "mean"` */
  hits: Float32Array;
  items: ParsedItem[];
  /** reasons [items]: why each item earns nothing, null when valid */
  reasons: (InvalidReason | null)[];
  /** number of items per invalid reason */
  invalid: Record<InvalidReason, number>;
  /** non-empty lines that were not items */
  skippedLines: number;
  /** {@link lengthReward} of the items with a parsable "Title (Year)" */
  length: number;
}

/** One request prepared for scoring many completions: its checks and ground-truth multisets. */
export interface PreparedRequest {
  context: CheckContext;
  /** one multiset for "respondent" and "union", one per respondent for "mean" */
  truths: GroundTruth[];
}

function rulesOf(o: ResolvedRankOptions): MatchRules {
  return { mode: o.mode, normalization: o.normalization, yearTolerance: o.yearTolerance };
}

function truthsOf(request: RewardRequest, o: ResolvedRankOptions, rules: MatchRules): GroundTruth[] {
  const respondents = request.respondents;
  if (respondents.length === 0) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', 'Expected request.respondents to hold at least one respondent but received Array(0)');
  }
  const dedupe = o.mode === 'default';
  if (o.target === 'union') return [groundTruth(respondents.flatMap((r) => r.items), rules, true)];
  if (o.target === 'mean') return respondents.map((r) => groundTruth(r.items, rules, dedupe));
  integer('respondent', o.respondent, 0, respondents.length - 1);
  return [groundTruth(respondents[o.respondent].items, rules, dedupe)];
}

/** Prepares `request` once for {@link scoreCompletion}; `options` must be resolved. */
export function prepareRequest(request: RewardRequest, o: ResolvedRankOptions): PreparedRequest {
  const rules = rulesOf(o);
  return { context: checkContext(rules, request.seen ?? [], o.catalog), truths: truthsOf(request, o, rules) };
}

function countReasons(reasons: readonly (InvalidReason | null)[]): Record<InvalidReason, number> {
  const counts: Record<InvalidReason, number> = { format: 0, seen: 0, notInCatalog: 0, duplicate: 0 };
  for (const reason of reasons) if (reason !== null) counts[reason]++;
  return counts;
}

/**
 * Scores one completion against a prepared request (see {@link rankRewards}), writing into `rewards`
 * and `hits` (K values each, zero-filled; the batch passes views of its [G, S, K] arrays).
 */
export function scoreCompletion(
  text: string,
  prepared: PreparedRequest,
  o: ResolvedRankOptions,
  rewards: Float32Array = new Float32Array(o.k),
  hits: Float32Array = new Float32Array(o.k),
): RankRewardResult {
  const { items, skippedLines } = parseItems(text, o.key === 'creator' ? 'creator' : o.mode);
  const titles = itemTitles(items, prepared.context.rules);
  const reasons = checkItems(items, titles.check, prepared.context);
  for (const truth of prepared.truths) addHits(hits, 1 / prepared.truths.length, items, titles.truth, reasons, truth, o.yearTolerance);
  shapeRewards(hits, o.shape, rewards);
  const invalid = countReasons(reasons);
  return {
    rewards,
    hits,
    items,
    reasons,
    invalid,
    skippedLines,
    length: lengthReward(items.length - invalid.format, o.k),
  };
}

/**
 * Rank-wise rewards of one completion for one request: parse the items, check them (format, seen,
 * notInCatalog, duplicate), match the valid ones against the target's ground truth and shape the
 * per-rank hits. Ranks beyond the parsed list get 0.
 *
 * @example
 * const { rewards } = rankRewards('1. Heat (1995)\n2. Up (2009)', { respondents: [{ items: [{ title: 'Up', year: 2009 }] }] }, { k: 3 });
 * // rewards = [0, 1, 0]
 */
export function rankRewards(text: string, request: RewardRequest, options?: RankRewardOptions): RankRewardResult {
  const o = resolveRankOptions(options);
  return scoreCompletion(text, prepareRequest(request, o), o);
}

/** Batch rewards: G requests × S completions each. */
export interface RankRewardBatch {
  /** rewards [groups, candidates, ranks] = [G, S, K] */
  rewards: Float32Array;
  /** hits [groups, candidates, ranks] */
  hits: Float32Array;
  /** length rewards [groups, candidates] */
  length: Float32Array;
  /** per completion, row-major [G, S]; their `rewards` and `hits` are views of the batch arrays */
  results: RankRewardResult[];
}

/** Options of {@link rankRewardsBatch}: the rank options plus one respondent index per group. */
export interface RankRewardBatchOptions extends Omit<RankRewardOptions, 'respondent'> {
  /** respondents [groups]: the respondent of each group when `target` is "respondent" (e.g. from the `rows` sampler). @defaultValue all 0 */
  respondents?: ArrayLike<number>;
}

/**
 * Scores `completions[g][s]` against `requests[g]` and fills one `[G, S, K]` Float32Array, the layout
 * the rank-wise advantage kernel reads. Every group must have the same number of completions S.
 */
export function rankRewardsBatch(
  completions: ReadonlyArray<readonly string[]>,
  requests: readonly RewardRequest[],
  options: RankRewardBatchOptions = {},
): RankRewardBatch {
  const { respondents, ...rankOptions } = options;
  const groups = requests.length;
  length('completions', completions, groups, '[groups] (one list per request)');
  if (respondents !== undefined) length('respondents', respondents, groups, '[groups]');
  const candidates = groups === 0 ? 0 : completions[0].length;
  const base = resolveRankOptions(rankOptions);
  // rewards, hits [groups, candidates, ranks]; lengths [groups, candidates]
  const rewards = new Float32Array(groups * candidates * base.k);
  const hits = new Float32Array(groups * candidates * base.k);
  const lengths = new Float32Array(groups * candidates);
  const results: RankRewardResult[] = [];
  for (let g = 0; g < groups; g++) {
    length(`completions[${g}]`, completions[g], candidates, '[candidates] (same S for every group)');
    const o = respondents ? resolveRankOptions({ ...rankOptions, respondent: respondents[g] }) : base;
    const prepared = prepareRequest(requests[g], o);
    for (let s = 0; s < candidates; s++) {
      const row = g * candidates + s;
      const view = (array: Float32Array) => array.subarray(row * base.k, (row + 1) * base.k);
      const result = scoreCompletion(completions[g][s], prepared, o, view(rewards), view(hits));
      lengths[row] = result.length;
      results.push(result);
    }
  }
  return { rewards, hits, length: lengths, results };
}
