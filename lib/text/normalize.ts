/**
 * Title normalisation for matching recommended items against ground truth, catalogs and seen lists.
 *
 * - `"default"`: Unicode NFKC, lower case, a trailing ", The" / ", A" / ", An" dropped, every run of
 *   characters that are neither letters nor digits collapsed to one space, a leading "the " / "a " / "an "
 *   dropped (only when something is left). `"The Matrix"`, `"Matrix, The"` and `"the  MATRIX!"` all
 *   become `"matrix"`.
 * - `"rankGrpo"`: the upstream Rank-GRPO normaliser, whitespace runs → one space, trimmed, lower case
 *   (`re.sub(r"\s+", " ", s.strip()).casefold()`; JS `toLowerCase` stands in for `casefold`).
 * - `"none"`: the raw string (upstream's catalog and seen checks compare raw strings).
 */
export type TitleNormalization = 'default' | 'rankGrpo' | 'none';

export const TITLE_NORMALIZATIONS: readonly TitleNormalization[] = Object.freeze(['default', 'rankGrpo', 'none']);

const TRAILING_ARTICLE = /,\s*(?:the|a|an)\s*$/u;
const NON_ALPHANUMERIC_RUN = /[^\p{L}\p{N}]+/gu;
const LEADING_ARTICLE = /^(?:the|a|an) (?=\S)/u;
const WHITESPACE_RUN = /\s+/gu;

/** The default normaliser (see {@link TitleNormalization}). */
export function normalizeTitleDefault(title: string): string {
  const folded = title.normalize('NFKC').toLowerCase().replace(TRAILING_ARTICLE, '');
  const words = folded.replace(NON_ALPHANUMERIC_RUN, ' ').trim();
  return words.replace(LEADING_ARTICLE, '');
}

/** The upstream Rank-GRPO normaliser: collapse whitespace, trim, case-fold. */
export function normalizeTitleRankGrpo(title: string): string {
  return title.trim().replace(WHITESPACE_RUN, ' ').toLowerCase();
}

// Completions repeat popular titles. Memoised, the 7,680 titles of a 48×8×20 batch normalise in ~0.7 ms
// instead of ~3.4 ms (2-vCPU EPYC VM, 2026-11-30), a quarter of the batch time.
const DEFAULT_CACHE_LIMIT = 65_536;
const defaultCache = new Map<string, string>();

function normalizeTitleDefaultCached(title: string): string {
  let normalized = defaultCache.get(title);
  if (normalized !== undefined) return normalized;
  if (defaultCache.size >= DEFAULT_CACHE_LIMIT) defaultCache.clear();
  normalized = normalizeTitleDefault(title);
  defaultCache.set(title, normalized);
  return normalized;
}

/** Normalises `title` with the chosen scheme; see {@link TitleNormalization}. */
export function normalizeTitle(title: string, normalization: TitleNormalization = 'default'): string {
  if (normalization === 'default') return normalizeTitleDefaultCached(title);
  if (normalization === 'rankGrpo') return normalizeTitleRankGrpo(title);
  return title;
}

/** One string key for a (title, year) pair whose title is already normalised. */
export function itemKey(normalizedTitle: string, year: number): string {
  return `${normalizedTitle}\u0000${year}`;
}
