// SFT examples over the catalog's facts (title, year, genres, cast), written in the request → list
// format the recommendation task uses, so a model trained from scratch learns which titles exist and
// with which year. Facts come from the catalog alone (no respondent's list), so nothing of the
// validation or test answers leaks in.
import type { BenchmarkFilm } from '../data/movies-multi.js';
import { renderItems } from '../rewards/items.js';
import type { SftExample } from '../trainer/sft.js';
import { recommendPrompt } from '../trainer/task-recommend.js';

/** Which fact questions the curriculum asks. */
export interface CurriculumOptions {
  /** one "describe → that film" question per film */
  films: boolean;
  /** per cast member with at least 2 films: "films starring X" → their films by mentions */
  cast: boolean;
  /** per (genre, decade) with at least 2 films: "G films from the Ds" → its films by mentions */
  genreDecades: boolean;
}

export const CURRICULUM_ALL: Readonly<CurriculumOptions> = Object.freeze({ films: true, cast: true, genreDecades: true });

const decadeOf = (film: BenchmarkFilm) => Math.floor(film.year / 10) * 10;

/** "A crime and drama film from 1995 starring Al Pacino, Robert De Niro." (the fields the film has). */
export function describeFilm(film: BenchmarkFilm): string {
  const genres = film.genres.length > 0 ? `${film.genres.join(' and ').toLowerCase()} ` : '';
  const cast = film.cast.length > 0 ? ` starring ${film.cast.join(', ')}` : '';
  return `Which ${genres}film from ${film.year}${cast}?`;
}

/** Films grouped by `keys(film)`, each group in catalog order (most-mentioned first), groups of ≥ 2 only. */
function groupsOf(films: readonly BenchmarkFilm[], keys: (f: BenchmarkFilm) => readonly string[]): Map<string, BenchmarkFilm[]> {
  const groups = new Map<string, BenchmarkFilm[]>();
  for (const film of films) for (const key of keys(film)) groups.set(key, [...(groups.get(key) ?? []), film]);
  for (const [key, members] of groups) if (members.length < 2) groups.delete(key);
  return groups;
}

const list = (films: readonly BenchmarkFilm[], ranks: number) => renderItems(films.slice(0, ranks));

/**
 * Fact examples over `films` (ordered most-mentioned first, as catalog.jsonl is): prompts use the
 * task's prompt format with `ranks`, targets are numbered "Title (Year)" lists of at most `ranks` films.
 */
export function catalogFactExamples(films: readonly BenchmarkFilm[], ranks: number, options: CurriculumOptions = CURRICULUM_ALL): SftExample[] {
  const examples: SftExample[] = [];
  if (options.films) {
    for (const film of films) examples.push({ prompt: recommendPrompt(describeFilm(film), ranks), target: list([film], ranks) });
  }
  if (options.cast) {
    for (const [actor, members] of groupsOf(films, (f) => f.cast)) {
      examples.push({ prompt: recommendPrompt(`Films starring ${actor}?`, ranks), target: list(members, ranks) });
    }
  }
  if (options.genreDecades) {
    for (const [key, members] of groupsOf(films, (f) => f.genres.map((g) => `${g}\u0000${decadeOf(f)}`))) {
      const [genre, decade] = key.split('\u0000');
      examples.push({ prompt: recommendPrompt(`${genre} films from the ${decade}s?`, ranks), target: list(members, ranks) });
    }
  }
  return examples;
}
