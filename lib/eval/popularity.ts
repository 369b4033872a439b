/**
 * Popularity lookups for "does training drift to popular items": ln(1 + popularity) of films by
 * normalised title and year, the nearest year within a tolerance (ties to the later year, the
 * matcher's order +1 before −1).
 */
import type { TitleYear } from '../text/catalog.js';
import { normalizeTitle } from '../text/normalize.js';

/** A film and its popularity (e.g. the `mentions` of the movies-multi catalog). */
export interface PopularityEntry extends TitleYear {
  popularity: number;
}

/** normalised title → [year, ln(1 + popularity)] pairs */
export type PopularityIndex = Map<string, Array<[number, number]>>;

/** Indexes entries by default-normalised title; entries with non-finite or negative popularity are skipped. */
export function popularityIndex(entries: Iterable<PopularityEntry>): PopularityIndex {
  const index: PopularityIndex = new Map();
  for (const { title, year, popularity } of entries) {
    if (!Number.isFinite(popularity) || popularity < 0) continue;
    const key = normalizeTitle(title);
    const years = index.get(key) ?? [];
    years.push([year, Math.log1p(popularity)]);
    index.set(key, years);
  }
  return index;
}

/** ln(1 + popularity) of the film nearest in year within `yearTolerance`, or undefined when unknown. */
export function logPopularity(index: PopularityIndex, title: string, year: number | null, yearTolerance: number): number | undefined {
  const years = year === null ? undefined : index.get(normalizeTitle(title));
  if (!years || year === null) return undefined;
  let best: number | undefined;
  let bestDistance = Infinity;
  for (const [candidate, value] of years) {
    const d = Math.abs(candidate - year);
    // equal distance: the later year wins (+1 before −1)
    if (d <= yearTolerance && (d < bestDistance || (d === bestDistance && candidate > year))) {
      best = value;
      bestDistance = d;
    }
  }
  return best;
}
