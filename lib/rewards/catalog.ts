import { GrpoError } from '../errors.js';
import { oneOf } from '../validate.js';
import { itemKey, normalizeTitle, TITLE_NORMALIZATIONS, type TitleNormalization } from './normalize.js';

/** A (title, year) pair: a catalog entry, a ground-truth item or a seen film. */
export interface TitleYear {
  title: string;
  year: number;
}

/**
 * A set of (title, year) pairs with one hashed index per normalisation, built on first use.
 * `has` is one normalisation plus one Set lookup.
 */
export class Catalog {
  readonly #entries: readonly TitleYear[];
  readonly #indexes = new Map<TitleNormalization, Set<string>>();
  readonly #only: TitleNormalization | null;

  private constructor(entries: readonly TitleYear[], prebuilt?: { normalization: TitleNormalization; keys: Set<string> }) {
    this.#entries = entries;
    this.#only = prebuilt?.normalization ?? null;
    if (prebuilt) this.#indexes.set(prebuilt.normalization, prebuilt.keys);
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
    const keys = new Set<string>();
    for (const line of text.split('\n')) {
      const tab = line.lastIndexOf('\t');
      if (tab > 0) keys.add(itemKey(line.slice(0, tab), Number(line.slice(tab + 1))));
    }
    return new Catalog([], { normalization: oneOf('normalization', normalization, TITLE_NORMALIZATIONS), keys });
  }

  /** Number of distinct (normalised title, year) keys in the default index (or the prebuilt one). */
  get size(): number {
    return this.#index(this.#only ?? 'default').size;
  }

  /** True when a film with this title (after `normalization`) and exactly this year is in the catalog. */
  has(title: string, year: number, normalization: TitleNormalization = 'default'): boolean {
    return this.#index(normalization).has(itemKey(normalizeTitle(title, normalization), year));
  }

  /** True when the key of an already-normalised title is present. */
  hasNormalized(normalizedTitle: string, year: number, normalization: TitleNormalization = 'default'): boolean {
    return this.#index(normalization).has(itemKey(normalizedTitle, year));
  }

  #index(normalization: TitleNormalization): Set<string> {
    const built = this.#indexes.get(normalization);
    if (built) return built;
    if (this.#only !== null) {
      throw new GrpoError(
        'GRPO_UNSUPPORTED',
        `This catalog was loaded from a "${this.#only}" index and cannot answer "${normalization}" lookups; load it from entries instead`,
      );
    }
    const keys = new Set(this.#entries.map((e) => itemKey(normalizeTitle(e.title, normalization), e.year)));
    this.#indexes.set(normalization, keys);
    return keys;
  }
}

/** The compact index text of `entries` (sorted, deduplicated) that `Catalog.fromIndex` reads. */
export function formatCatalogIndex(entries: Iterable<TitleYear>, normalization: TitleNormalization = 'default'): string {
  const lines = new Set<string>();
  for (const { title, year } of entries) lines.add(`${normalizeTitle(title, normalization)}\t${year}`);
  return [...lines].sort().join('\n') + '\n';
}
