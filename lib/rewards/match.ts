import type { Catalog, TitleYear } from './catalog.js';
import type { ParsedItem } from './items.js';
import { itemKey, normalizeTitle, type TitleNormalization } from './normalize.js';

/** Why an item earns nothing. */
export type InvalidReason = 'format' | 'seen' | 'notInCatalog' | 'duplicate';

export const INVALID_REASONS: readonly InvalidReason[] = Object.freeze(['format', 'seen', 'notInCatalog', 'duplicate']);

/** A seen film: a bare title (every year) or a title with a year (matched within the year tolerance). */
export type SeenEntry = string | { title: string; year?: number | null };

/**
 * How items are checked and matched. `"default"` normalises everything with `normalization`;
 * `"rankGrpo"` reproduces upstream exactly: seen and catalog checks on the raw strings, ground truth
 * normalised with the upstream normaliser, no duplicate check (ground-truth consumption limits repeats).
 */
export interface MatchRules {
  mode: 'default' | 'rankGrpo';
  normalization: TitleNormalization;
  yearTolerance: number;
}

/** The checks of one request, prepared once and applied to every completion. */
export interface CheckContext {
  rules: MatchRules;
  catalog?: Catalog;
  /** normalised seen title → allowed years (null = every year) */
  seen: Map<string, number[] | null>;
}

function checkNormalization(rules: MatchRules): TitleNormalization {
  return rules.mode === 'rankGrpo' ? 'none' : rules.normalization;
}

function groundTruthNormalization(rules: MatchRules): TitleNormalization {
  return rules.mode === 'rankGrpo' ? 'rankGrpo' : rules.normalization;
}

/** Prepares the seen list and catalog of one request for {@link checkItems}. */
export function checkContext(rules: MatchRules, seen: readonly SeenEntry[] = [], catalog?: Catalog): CheckContext {
  const normalization = checkNormalization(rules);
  const index = new Map<string, number[] | null>();
  for (const entry of seen) {
    const title = normalizeTitle(typeof entry === 'string' ? entry : entry.title, normalization);
    const year = typeof entry === 'string' ? null : entry.year ?? null;
    const years = index.get(title);
    if (year === null || years === null) index.set(title, null);
    else index.set(title, [...(years ?? []), year]);
  }
  return { rules, catalog, seen: index };
}

function isSeen(context: CheckContext, title: string, year: number): boolean {
  const years = context.seen.get(title);
  if (years === undefined) return false;
  if (years === null || context.rules.mode === 'rankGrpo') return true;
  return years.some((y) => Math.abs(y - year) <= context.rules.yearTolerance);
}

/**
 * The reason each item earns nothing, or null when it is valid, checked in the order
 * format → seen → notInCatalog → duplicate (same normalised title and year earlier in the list).
 */
export function checkItems(items: readonly ParsedItem[], context: CheckContext): (InvalidReason | null)[] {
  const normalization = checkNormalization(context.rules);
  const earlier = new Set<string>();
  return items.map((item) => {
    if (item.year === null) return 'format';
    const title = normalizeTitle(item.title, normalization);
    if (isSeen(context, title, item.year)) return 'seen';
    if (context.catalog && !context.catalog.hasNormalized(title, item.year, normalization)) return 'notInCatalog';
    if (context.rules.mode === 'rankGrpo') return null;
    const key = itemKey(title, item.year);
    if (earlier.has(key)) return 'duplicate';
    earlier.add(key);
    return null;
  });
}

/** Ground truth as a multiset: normalised title → year → count. */
export type GroundTruth = Map<string, Map<number, number>>;

/**
 * Builds the ground-truth multiset. Entries whose year is not an integer are dropped (upstream drops
 * years `int()` cannot parse). With `dedupe`, each normalised (title, year) counts once (the ReMaRk union).
 */
export function groundTruth(items: Iterable<TitleYear>, rules: MatchRules, dedupe: boolean): GroundTruth {
  const normalization = groundTruthNormalization(rules);
  const buckets: GroundTruth = new Map();
  for (const { title, year } of items) {
    if (!Number.isInteger(year)) continue;
    const key = normalizeTitle(title, normalization);
    const years = buckets.get(key) ?? new Map<number, number>();
    years.set(year, dedupe ? 1 : (years.get(year) ?? 0) + 1);
    buckets.set(key, years);
  }
  return buckets;
}

/** Year candidates in upstream preference order: y, y+1, y−1, …, y+tol, y−tol. */
function yearCandidates(year: number, tolerance: number): number[] {
  const years = [year];
  for (let d = 1; d <= tolerance; d++) years.push(year + d, year - d);
  return years;
}

/**
 * Hit indicator per item position (1 = matched a ground-truth unit, which is then consumed).
 * Invalid items never hit. Matching: same normalised title, exact year first, then ±1, ±2, … up to
 * the tolerance (+d before −d); each ground-truth unit is consumed at most once.
 */
export function matchHits(
  items: readonly ParsedItem[],
  reasons: readonly (InvalidReason | null)[],
  truth: GroundTruth,
  rules: MatchRules,
): Uint8Array {
  // hits [items]
  const hits = new Uint8Array(items.length);
  const used = new Map<string, number>();
  const normalization = groundTruthNormalization(rules);
  for (let i = 0; i < items.length; i++) {
    const year = items[i].year;
    if (reasons[i] !== null || year === null) continue;
    const title = normalizeTitle(items[i].title, normalization);
    const years = truth.get(title);
    if (!years) continue;
    for (const candidate of yearCandidates(year, rules.yearTolerance)) {
      const key = itemKey(title, candidate);
      const left = (years.get(candidate) ?? 0) - (used.get(key) ?? 0);
      if (left <= 0) continue;
      used.set(key, (used.get(key) ?? 0) + 1);
      hits[i] = 1;
      break;
    }
  }
  return hits;
}
