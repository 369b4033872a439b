import type { Catalog, TitleYear } from '../text/catalog.js';
import { normalizeTitle, type TitleNormalization } from '../text/normalize.js';
import type { SeenEntry } from '../text/records.js';
import { upstreamYear } from './items-rankgrpo.js';
import type { ParsedItem } from './parsed-item.js';

/** Why an item earns nothing. */
export type InvalidReason = 'format' | 'seen' | 'notInCatalog' | 'duplicate';

export const INVALID_REASONS: readonly InvalidReason[] = Object.freeze(['format', 'seen', 'notInCatalog', 'duplicate']);

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

/** Item titles normalised for the checks and for ground-truth matching (one array when both agree). */
export interface ItemTitles {
  check: string[];
  truth: string[];
}

/** Normalises every item title once per use (see {@link MatchRules} for which normalisation is which). */
export function itemTitles(items: readonly ParsedItem[], rules: MatchRules): ItemTitles {
  const check = items.map((item) => normalizeTitle(item.title, checkNormalization(rules)));
  const same = checkNormalization(rules) === groundTruthNormalization(rules);
  return { check, truth: same ? check : items.map((item) => normalizeTitle(item.title, groundTruthNormalization(rules))) };
}

function isDuplicate(items: readonly ParsedItem[], titles: readonly string[], reasons: readonly (InvalidReason | null)[], i: number): boolean {
  for (let j = 0; j < i; j++) {
    if (reasons[j] === null && titles[j] === titles[i] && items[j].year === items[i].year) return true;
  }
  return false;
}

/**
 * The reason each item earns nothing, or null when it is valid, checked in the order
 * format → seen → notInCatalog → duplicate (same normalised title and year earlier in the list).
 * `titles` are the check titles of {@link itemTitles}.
 */
export function checkItems(items: readonly ParsedItem[], titles: readonly string[], context: CheckContext): (InvalidReason | null)[] {
  const normalization = checkNormalization(context.rules);
  const reasons: (InvalidReason | null)[] = [];
  for (let i = 0; i < items.length; i++) {
    const year = items[i].year;
    if (year === null) reasons.push('format');
    else if (isSeen(context, titles[i], year)) reasons.push('seen');
    else if (context.catalog && !context.catalog.hasNormalized(titles[i], year, normalization)) reasons.push('notInCatalog');
    else if (context.rules.mode === 'default' && isDuplicate(items, titles, reasons, i)) reasons.push('duplicate');
    else reasons.push(null);
  }
  return reasons;
}

/** Ground truth as a multiset: normalised title → year → count. */
export type GroundTruth = Map<string, Map<number, number>>;

/**
 * Builds the ground-truth multiset. Entries whose year is not an integer are dropped; the rankGrpo
 * mode reads years as upstream `int(str(y))` ({@link upstreamYear}: "1999" is 1999, "n/a" is dropped).
 * With `dedupe`, each normalised (title, year) counts once (the ReMaRk union).
 */
export function groundTruth(items: Iterable<TitleYear>, rules: MatchRules, dedupe: boolean): GroundTruth {
  const normalization = groundTruthNormalization(rules);
  const buckets: GroundTruth = new Map();
  for (const item of items) {
    const { title } = item;
    const year = rules.mode === 'rankGrpo' ? upstreamYear(item.year) : item.year;
    if (year === null || !Number.isInteger(year)) continue;
    const key = normalizeTitle(title, normalization);
    const years = buckets.get(key) ?? new Map<number, number>();
    years.set(year, dedupe ? 1 : (years.get(year) ?? 0) + 1);
    buckets.set(key, years);
  }
  return buckets;
}

/** Year offset of the d-th candidate in upstream preference order: 0, +1, −1, +2, −2, … */
function yearOffset(d: number): number {
  return d % 2 === 1 ? (d + 1) / 2 : -d / 2;
}

/**
 * Adds `weight` to `out[i]` for every item i that hits (matches a ground-truth unit, which is then
 * consumed). Invalid items never hit. Matching: same normalised title (`titles`: the truth titles of
 * {@link itemTitles}), exact year first, then +1, −1, +2, −2, … up to the tolerance; each
 * ground-truth unit is consumed at most once. Items beyond `out.length` are ignored.
 */
export function addHits(
  out: Float32Array,
  weight: number,
  items: readonly ParsedItem[],
  titles: readonly string[],
  reasons: readonly (InvalidReason | null)[],
  truth: GroundTruth,
  yearTolerance: number,
): void {
  // normalised title → year → units consumed so far
  const used = new Map<string, Map<number, number>>();
  for (let i = 0; i < Math.min(items.length, out.length); i++) {
    const year = items[i].year;
    const years = reasons[i] === null && year !== null ? truth.get(titles[i]) : undefined;
    if (!years || year === null) continue;
    const taken = used.get(titles[i]) ?? new Map<number, number>();
    for (let d = 0; d <= 2 * yearTolerance; d++) {
      const candidate = year + yearOffset(d);
      const consumed = taken.get(candidate) ?? 0;
      if ((years.get(candidate) ?? 0) <= consumed) continue;
      taken.set(candidate, consumed + 1);
      used.set(titles[i], taken);
      out[i] += weight;
      break;
    }
  }
}

/** Hit indicator (0/1) per item position; see {@link addHits}. */
export function matchHits(
  items: readonly ParsedItem[],
  titles: readonly string[],
  reasons: readonly (InvalidReason | null)[],
  truth: GroundTruth,
  yearTolerance: number,
): Float32Array {
  // hits [items]
  const hits = new Float32Array(items.length);
  addHits(hits, 1, items, titles, reasons, truth, yearTolerance);
  return hits;
}
