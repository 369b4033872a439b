import { itemKey, normalizeTitle } from '../text/normalize.js';
import type { BenchmarkFilm } from './movies-multi.js';
import type { RecRequest } from './schemas.js';

/** Summary of a list of counts. */
export interface Distribution {
  min: number;
  median: number;
  mean: number;
  max: number;
  /** value → how many times it occurs (only for small integer ranges) */
  histogram?: Record<number, number>;
}

/** Statistics of a generated `movies-multi` benchmark. */
export interface MoviesMultiStats {
  films: number;
  requestsPerSplit: Record<string, number>;
  respondentsPerRequest: Distribution;
  itemsPerRespondent: Distribution;
  relevantSize: Distribution;
  /** distinct films named by the respondents of a request */
  unionSize: Distribution;
  /** mean of |union| / |relevant|: how much of the latent set the respondents reveal */
  unionCoverage: number;
  requestsWithSeen: number;
  constraintShapes: Record<string, number>;
  /** mean ReDial mentions of the relevant films vs of the films respondents picked (popularity bias) */
  meanMentions: { relevant: number; picked: number };
}

function distribution(values: readonly number[], histogram: boolean): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const summary: Distribution = {
    min: sorted[0] ?? 0,
    median: sorted[Math.floor(sorted.length / 2)] ?? 0,
    mean: sorted.reduce((a, b) => a + b, 0) / Math.max(sorted.length, 1),
    max: sorted[sorted.length - 1] ?? 0,
  };
  if (histogram) summary.histogram = countBy(values.map(String)) as unknown as Record<number, number>;
  return summary;
}

function countBy(keys: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(values.length, 1);
}

/** Computes {@link MoviesMultiStats} for generated requests and their films. */
export function moviesMultiStats(requests: readonly RecRequest[], films: readonly BenchmarkFilm[]): MoviesMultiStats {
  const mentions = new Map(films.map((f) => [itemKey(normalizeTitle(f.title), f.year), f.mentions]));
  const mentionsOf = (item: { title: string; year: number }) => mentions.get(itemKey(normalizeTitle(item.title), item.year)) ?? 0;
  const unions = requests.map((r) => new Set(r.respondents.flatMap((p) => p.items.map((i) => itemKey(normalizeTitle(i.title), i.year)))).size);
  const relevantSizes = requests.map((r) => r.relevant?.length ?? 0);
  return {
    films: films.length,
    requestsPerSplit: countBy(requests.map((r) => r.split ?? 'none')),
    respondentsPerRequest: distribution(requests.map((r) => r.respondents.length), true),
    itemsPerRespondent: distribution(requests.flatMap((r) => r.respondents.map((p) => p.items.length)), true),
    relevantSize: distribution(relevantSizes, false),
    unionSize: distribution(unions, false),
    unionCoverage: mean(unions.map((u, i) => u / Math.max(relevantSizes[i], 1))),
    requestsWithSeen: requests.filter((r) => r.seen.length > (r.constraints?.like ? 1 : 0)).length,
    constraintShapes: countBy(requests.map((r) => String(r.constraints?.shape ?? 'unknown'))),
    meanMentions: {
      relevant: mean(requests.flatMap((r) => (r.relevant ?? []).map(mentionsOf))),
      picked: mean(requests.flatMap((r) => r.respondents.flatMap((p) => p.items.map(mentionsOf)))),
    },
  };
}
