import { pickOne, type Random } from './rng.js';
import type { TitleYear } from '../text/catalog.js';

/** The constraints of a `movies-multi` request; every film meeting all of them is relevant. */
export interface MoviesMultiConstraints {
  /** the film must carry every one of these genre labels */
  genres?: string[];
  /** first year of the decade the film must be from (e.g. 1990) */
  decade?: number;
  /** a cast member the film must list */
  cast?: string;
  /** "like <film>": the film shares the anchor's first two genre labels (one if it has one) and is within ±8 years */
  like?: TitleYear;
}

function genrePhrase(genres: readonly string[]): string {
  return genres.map((g) => (g === 'Science Fiction' ? 'sci-fi' : g.toLowerCase())).join(' ');
}

function film(item: TitleYear): string {
  return `${item.title} (${item.year})`;
}

type Template = (c: MoviesMultiConstraints, g: string) => string;

// Keyed by which constraints are present (genres/decade/cast/like); each list holds a few phrasings.
const TEMPLATES: Record<string, readonly Template[]> = {
  genres: [(_, g) => `I'm in the mood for a ${g} movie. Any suggestions?`, (_, g) => `What are the best ${g} films you know?`],
  'genres+decade': [
    (c, g) => `Any good ${g} movies from the ${c.decade}s?`,
    (c, g) => `Recommend me some ${c.decade}s ${g} films.`,
    (c, g) => `What are your favourite ${g} movies of the ${c.decade}s?`,
  ],
  cast: [(c) => `What should I watch with ${c.cast} in it?`, (c) => `Big ${c.cast} fan here. Which of their movies should I see?`],
  'genres+cast': [(c, g) => `Looking for ${g} movies starring ${c.cast}.`, (c, g) => `Which ${g} films with ${c.cast} are worth watching?`],
  'decade+cast': [(c) => `Best ${c.cast} movies from the ${c.decade}s?`],
  like: [
    (c) => `I just watched ${film(c.like!)} and loved it. What should I watch next?`,
    (c) => `Movies like ${film(c.like!)}?`,
    (c) => `Can you suggest films similar to ${film(c.like!)}?`,
  ],
};

/** The template families the generator can render (a constraint set must match one of them). */
export const CONSTRAINT_SHAPES: readonly string[] = Object.freeze(Object.keys(TEMPLATES));

/** Which template family a constraint set belongs to ("genres+decade", "like", …). */
export function constraintShape(c: MoviesMultiConstraints): string {
  return (['genres', 'decade', 'cast', 'like'] as const).filter((key) => c[key] !== undefined).join('+');
}

/** Renders a constraint set (and the films the requester has seen) as a short English request. */
export function renderRequest(random: Random, constraints: MoviesMultiConstraints, seen: readonly TitleYear[]): string {
  const template = pickOne(random, TEMPLATES[constraintShape(constraints)]);
  const text = template(constraints, genrePhrase(constraints.genres ?? []));
  if (seen.length === 0) return text;
  const names = seen.map(film);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  return `${text} I've already seen ${list}.`;
}
