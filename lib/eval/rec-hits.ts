/**
 * Hits of one generated list against a ground truth, under our default evaluation semantics (the
 * training matcher of lib/rewards) or upstream Rank-GRPO's `evaluate_direct_match` (§4.10).
 */
import type { Catalog, TitleYear } from '../text/catalog.js';
import { GrpoError } from '../errors.js';
import { parseItems } from '../rewards/items.js';
import type { ItemKey } from '../text/title.js';
import { checkContext, checkItems, groundTruth, itemTitles, matchHits, type MatchRules } from '../rewards/match.js';
import type { SeenEntry } from '../text/records.js';
import type { TitleNormalization } from '../text/normalize.js';

/**
 * - `"default"`: our parser and checks (format, seen, notInCatalog, duplicate), positions kept (an
 *   invalid item keeps its rank and earns 0), normalised titles, ground truth deduplicated and each
 *   unit consumed once, years exact then ±1, ±2; ideal DCG over min(K, |truth|).
 * - `"upstream"`: `evaluate_direct_match`: upstream parser, seen (raw title) and catalog (raw
 *   title and year) filters that compact the list, case-sensitive exact titles, each ground-truth
 *   entry (duplicates kept) hits the first item within ±yearTolerance, ideal DCG over
 *   min(K, |truth|, cleaned list length) (TV25).
 * - `"upstreamTruncateFirst"`: as `"upstream"` but the raw list is cut to K before the filters.
 */
export type EvalSemantics = 'default' | 'upstream' | 'upstreamTruncateFirst';

export const EVAL_SEMANTICS: readonly EvalSemantics[] = Object.freeze(['default', 'upstream', 'upstreamTruncateFirst']);

/** What the hit finders need to know. */
export interface HitRules {
  semantics: EvalSemantics;
  normalization: TitleNormalization;
  yearTolerance: number;
  /** `"creator"`: "Title (Creator)" lines (default semantics only) */
  key: ItemKey;
  catalog?: Catalog;
}

/** Hits of the evaluated list against one ground truth. */
export interface ListHits {
  /** hits [positions]: 1 where the item at that position hits */
  hits: Float32Array;
  /** Size of the ground truth: the recall denominator. */
  truthSize: number;
  /** Positions that can fill the ideal list (the cleaned list under the upstream semantics). */
  idealCap: number;
}

/** One completion prepared once and matched against many ground truths. */
export interface ScoredList {
  /** items [positions]: the evaluated list */
  items: ReadonlyArray<{ title: string; year: number | null }>;
  /** valid [positions]: items that can hit (passed the checks) */
  valid: readonly boolean[];
  hitsAgainst(truth: readonly TitleYear[]): ListHits;
}

function defaultList(text: string, seen: readonly SeenEntry[], rules: HitRules): ScoredList {
  const match: MatchRules = { mode: 'default', normalization: rules.normalization, yearTolerance: rules.yearTolerance };
  const { items } = parseItems(text, rules.key === 'creator' ? 'creator' : 'default');
  const titles = itemTitles(items, match);
  const reasons = checkItems(items, titles.check, checkContext(match, seen, rules.catalog));
  return {
    items,
    valid: reasons.map((reason) => reason === null),
    hitsAgainst(truth) {
      const units = groundTruth(truth, match, true);
      let truthSize = 0;
      for (const years of units.values()) truthSize += years.size;
      return { hits: matchHits(items, titles.truth, reasons, units, rules.yearTolerance), truthSize, idealCap: Infinity };
    },
  };
}

function upstreamList(text: string, seen: readonly SeenEntry[], rules: HitRules, cut: number): ScoredList {
  const seenTitles = new Set(seen.map((entry) => (typeof entry === 'string' ? entry : entry.title)));
  const inCatalog = (title: string, year: number) => !rules.catalog || rules.catalog.has(title, year, 'none');
  const items = parseItems(text, 'rankGrpo')
    .items.slice(0, cut)
    .filter((item) => !seenTitles.has(item.title) && inCatalog(item.title, item.year as number));
  return {
    items,
    valid: items.map(() => true),
    hitsAgainst(truth) {
      // hits [cleaned items]: every ground-truth entry marks the first item within the tolerance
      const hits = new Float32Array(items.length);
      for (const entry of truth) {
        const at = items.findIndex((item) => item.title === entry.title && Math.abs((item.year as number) - entry.year) <= rules.yearTolerance);
        if (at >= 0) hits[at] = 1;
      }
      return { hits, truthSize: truth.length, idealCap: items.length };
    },
  };
}

/**
 * The evaluated list of one completion. `k` matters only for `"upstreamTruncateFirst"`, which cuts
 * the raw list before its filters.
 */
export function scoreList(text: string, seen: readonly SeenEntry[], rules: HitRules, k: number): ScoredList {
  if (rules.semantics === 'default') return defaultList(text, seen, rules);
  if (rules.key === 'creator') throw new GrpoError('GRPO_UNSUPPORTED', `Evaluation semantics "${rules.semantics}" reads films only; creator-keyed items need "default"`);
  return upstreamList(text, seen, rules, rules.semantics === 'upstreamTruncateFirst' ? k : Infinity);
}
