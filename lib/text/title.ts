// Item titles: the default cleaner, and where a "(YYYY)" year stands in a line.

// [^\S\n]: a space that never crosses a line (the item parser reads lines in place).
const YEAR_AT = /\([^\S\n]*\d{4}[^\S\n]*\)/y;
const QUOTE_PAIRS: ReadonlyArray<readonly [string, string]> = [['"', '"'], ["'", "'"], ['“', '”'], ['‘', '’'], ['«', '»']];
const EMPHASIS_EDGES = /^[*_~]+|[*_~]+$/g;
const TRAILING_SEPARATOR = /\s*[-–—:,;]+$/;
const TRAILING_PARENTHETICAL = /(?:\s*\([^()]*\))+$/; // all trailing groups in one pass
const SPACE_RUN = /\s+/g;
const ODD_SPACE = /\s\s|[^\S ]/;
// Titles that start and end with none of the characters cleanTitle strips (most of them) skip its loop.
const STRIPPED_FIRST = new Set('*_~"\'“‘«');
const STRIPPED_LAST = new Set('*_~"\'”’»-–—:,;)');

function stripQuotePair(title: string): string {
  for (const [open, close] of QUOTE_PAIRS) {
    if (title.length >= 2 && title.startsWith(open) && title.endsWith(close)) return title.slice(1, -1);
  }
  return title;
}

/**
 * The default title cleaner: collapse whitespace, then until nothing changes strip emphasis markers
 * (`* _ ~`) at either end, one pair of outer quotes, a trailing separator ("-", ":", …) and trailing
 * parenthetical groups such as "(Director's Cut)". Leading groups such as "(500) Days of Summer" stay.
 */
export function cleanTitle(raw: string): string {
  let title = (ODD_SPACE.test(raw) ? raw.replace(SPACE_RUN, ' ') : raw).trim();
  if (title.length > 0 && !STRIPPED_FIRST.has(title[0]) && !STRIPPED_LAST.has(title[title.length - 1])) return title;
  for (;;) {
    const next = stripQuotePair(title.replace(EMPHASIS_EDGES, '').trim())
      .replace(TRAILING_SEPARATOR, '')
      .replace(TRAILING_PARENTHETICAL, '')
      .trim();
    if (next === title) return title;
    title = next;
  }
}

/** True when `title` survives a render → parse round trip unchanged (clean, no "(YYYY)" inside). */
export function isCleanTitle(title: string): boolean {
  return title.length > 0 && cleanTitle(title) === title && yearOpen(title, 0, title.length) < 0;
}

/** Index of the first "(YYYY)" (spaces allowed inside) in [from, end), or −1. */
export function yearOpen(text: string, from: number, end: number): number {
  for (let open = text.indexOf('(', from); open >= 0 && open < end; open = text.indexOf('(', open + 1)) {
    YEAR_AT.lastIndex = open;
    if (YEAR_AT.test(text) && YEAR_AT.lastIndex <= end) return open;
  }
  return -1;
}

/** What tells two items of one title apart: the release year (films) or the creator (an author, an artist). */
export type ItemKey = 'year' | 'creator';

export const ITEM_KEYS: readonly ItemKey[] = Object.freeze(['year', 'creator'] as const);

/**
 * The one title under which a creator-keyed item (a book and its author, a record and its artist) is checked and
 * matched: `"Title / Creator"`. Items keyed by a creator have no year: they are compared as this title with year 0,
 * so every title rule (normalisation, seen, catalog, duplicates) applies to the pair and the year rule to nothing.
 * @example creatorTitle('The Hobbit', 'J. R. R. Tolkien') // "The Hobbit / J. R. R. Tolkien"
 */
export function creatorTitle(title: string, creator: string): string {
  return `${title.trim()} / ${creator.trim()}`;
}

/** Where the trailing "(…)" group of [from, end) opens (its ")" ends the range; nothing nested), or −1. */
export function trailingGroupOpen(text: string, from: number, end: number): number {
  if (text[end - 1] !== ')') return -1;
  const open = text.lastIndexOf('(', end - 2);
  return open >= from && text.indexOf(')', open) === end - 1 ? open : -1;
}
