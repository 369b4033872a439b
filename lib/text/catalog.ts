import { GrpoError } from '../errors.js';
import { oneOf } from '../validate.js';
import { normalizeTitle, TITLE_NORMALIZATIONS, type TitleNormalization } from './normalize.js';

/** A (title, year) pair: a catalog entry, a ground-truth item or a seen film. */
export interface TitleYear {
  title: string;
  year: number;
}

/** normalised title → its years */
type TitleIndex = Map<string, number[]>;

function addYear(index: TitleIndex, title: string, year: number): void {
  const years = index.get(title);
  if (!years) index.set(title, [year]);
  else if (!years.includes(year)) years.push(year);
}

/** {@link Catalog.toData}: what a worker thread needs to rebuild a catalog. */
export interface CatalogData {
  entries: readonly TitleYear[];
  only: TitleNormalization | null;
  indexes: [TitleNormalization, TitleIndex][];
}

/**
 * A set of (title, year) pairs with one hashed index per normalisation (normalised title → years),
 * built on first use. `has` is one normalisation plus one Map lookup.
 */
export class Catalog {
  readonly #entries: readonly TitleYear[];
  readonly #indexes = new Map<TitleNormalization, TitleIndex>();
  readonly #only: TitleNormalization | null;

  private constructor(entries: readonly TitleYear[], prebuilt?: { normalization: TitleNormalization; index: TitleIndex }) {
    this.#entries = entries;
    this.#only = prebuilt?.normalization ?? null;
    if (prebuilt) this.#indexes.set(prebuilt.normalization, prebuilt.index);
  }

  /** A catalog of the given entries (any object with `title` and `year`; other fields are ignored). */
  static fromEntries(entries: Iterable<TitleYear>): Catalog {
    const list: TitleYear[] = [];
    for (const { title, year } of entries) list.push({ title, year });
    return new Catalog(list);
  }

  /**
   * A catalog from a compact index text: one `normalizedTitle<TAB>year` per line, titles already
   * normalised with `normalization` (see `formatCatalogIndex`). Only that normalisation can be queried.
   */
  static fromIndex(text: string, normalization: TitleNormalization = 'default'): Catalog {
    const index: TitleIndex = new Map();
    for (const line of text.split('\n')) {
      const tab = line.lastIndexOf('\t');
      if (tab > 0) addYear(index, line.slice(0, tab), Number(line.slice(tab + 1)));
    }
    return new Catalog([], { normalization: oneOf('normalization', normalization, TITLE_NORMALIZATIONS), index });
  }

  /** A plain copy (entries and the indexes built so far) that structured clone carries to a worker thread. */
  toData(): CatalogData {
    return { entries: this.#entries, only: this.#only, indexes: [...this.#indexes] };
  }

  /** The catalog of {@link Catalog.toData}'s copy (answers exactly what the original answers). */
  static fromData(data: CatalogData): Catalog {
    const only = data.only === null ? undefined : { normalization: data.only, index: new Map(data.indexes).get(data.only)! };
    const catalog = new Catalog(data.entries, only);
    for (const [normalization, index] of data.indexes) catalog.#indexes.set(normalization, index);
    return catalog;
  }

  /** Number of distinct (normalised title, year) keys in the default index (or the prebuilt one). */
  get size(): number {
    let size = 0;
    for (const years of this.#index(this.#only ?? 'default').values()) size += years.length;
    return size;
  }

  /** True when a film with this title (after `normalization`) and exactly this year is in the catalog. */
  has(title: string, year: number, normalization: TitleNormalization = 'default'): boolean {
    return this.hasNormalized(normalizeTitle(title, normalization), year, normalization);
  }

  /** True when the key of an already-normalised title is present. */
  hasNormalized(normalizedTitle: string, year: number, normalization: TitleNormalization = 'default'): boolean {
    return this.#index(normalization).get(normalizedTitle)?.includes(year) ?? false;
  }

  #index(normalization: TitleNormalization): TitleIndex {
    const built = this.#indexes.get(normalization);
    if (built) return built;
    if (this.#only !== null) {
      throw new GrpoError(
        'GRPO_UNSUPPORTED',
        `This catalog was loaded from a "${this.#only}" index and cannot answer "${normalization}" lookups; load it from entries instead`,
      );
    }
    const index: TitleIndex = new Map();
    for (const { title, year } of this.#entries) addYear(index, normalizeTitle(title, normalization), year);
    this.#indexes.set(normalization, index);
    return index;
  }
}

/** The compact index text of `entries` (sorted, deduplicated) that `Catalog.fromIndex` reads. */
export function formatCatalogIndex(entries: Iterable<TitleYear>, normalization: TitleNormalization = 'default'): string {
  const lines = new Set<string>();
  for (const { title, year } of entries) lines.add(`${normalizeTitle(title, normalization)}\t${year}`);
  return [...lines].sort().join('\n') + '\n';
}
