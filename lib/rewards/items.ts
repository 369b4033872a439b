import { GrpoError } from '../errors.js';
import { oneOf } from '../validate.js';
import { parseItemsRankGrpo } from './items-rankgrpo.js';

/** Which parser turns a completion into items. */
export type ItemParser = 'default' | 'rankGrpo';

export const ITEM_PARSERS: readonly ItemParser[] = Object.freeze(['default', 'rankGrpo']);

/**
 * One recommended item of a completion, in list order.
 * `span` is `[start, end)` in UTF-16 code units of the original text (JS string indices): the line's
 * extent without surrounding whitespace, so a tokenizer's character offsets can be mapped onto it.
 */
export interface ParsedItem {
  /** Cleaned title as written (not normalised); for a `format` item, the line's text after its marker. */
  title: string;
  /** Release year, or null when the line has a list marker but no parsable "(YYYY)" (a `format` item). */
  year: number | null;
  /** `[start, end)` character span of the item's line in the original text. */
  span: [number, number];
  /** 0-based index of the line in the text (lines split on "\n"). */
  line: number;
}

/** Items of one completion, plus the count of non-empty lines that were not items (preambles, comments). */
export interface ParseResult {
  items: ParsedItem[];
  skippedLines: number;
}

/** A non-empty line of text with its trimmed extent. */
export interface TextLine {
  text: string;
  start: number;
  end: number;
  index: number;
}

/** Non-empty lines of `text` (split on "\n"), each trimmed with `trim`, with their spans. */
export function nonEmptyLines(text: string, trimStart: RegExp, trimEnd: RegExp): TextLine[] {
  const lines: TextLine[] = [];
  let start = 0;
  for (let index = 0; start <= text.length; index++) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const raw = text.slice(start, end);
    const lead = raw.length - raw.replace(trimStart, '').length;
    const trail = raw.length - raw.replace(trimEnd, '').length;
    if (lead < raw.length) lines.push({ text: raw.slice(lead, raw.length - trail), start: start + lead, end: end - trail, index });
    start = end + 1;
  }
  return lines;
}

const LEADING_SPACE = /^\s+/u;
const TRAILING_SPACE = /\s+$/u;
// "1." "12)" "3 -" (dash needs a space after it, so "3-Iron" stays), optionally inside **…**; or a bullet.
const LIST_MARKER = /^(?:[-*•+·‣◦▪]\s+|[*_]*\d{1,3}\s*(?:[.)]|[-–—](?=\s))[*_]*\s*)/u;
const YEAR = /\(\s*(\d{4})\s*\)/u;
const YEAR_ANYWHERE = /\(\s*\d{4}\s*\)/u;
const QUOTE_PAIRS: ReadonlyArray<readonly [string, string]> = [['"', '"'], ["'", "'"], ['“', '”'], ['‘', '’'], ['«', '»']];
const EMPHASIS_EDGES = /^[*_~]+|[*_~]+$/gu;
const TRAILING_SEPARATOR = /\s*[-–—:,;]+$/u;
const TRAILING_PARENTHETICAL = /\s*\([^()]*\)$/u;

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
  let title = raw.replace(/\s+/gu, ' ').trim();
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
  return title.length > 0 && cleanTitle(title) === title && !YEAR_ANYWHERE.test(title);
}

function parseLine(line: TextLine): ParsedItem | null {
  const marker = LIST_MARKER.exec(line.text);
  const body = marker ? line.text.slice(marker[0].length) : line.text;
  const year = YEAR.exec(body);
  const span: [number, number] = [line.start, line.end];
  if (year) {
    const title = cleanTitle(body.slice(0, year.index));
    if (title.length > 0) return { title, year: Number(year[1]), span, line: line.index };
  }
  // A marked line without a usable "Title (Year)" still takes a rank (as a `format` item); prose does not.
  return marker ? { title: cleanTitle(body), year: null, span, line: line.index } : null;
}

function parseItemsDefault(text: string): ParseResult {
  const items: ParsedItem[] = [];
  let skippedLines = 0;
  for (const line of nonEmptyLines(text, LEADING_SPACE, TRAILING_SPACE)) {
    const item = parseLine(line);
    if (item) items.push(item);
    else skippedLines++;
  }
  return { items, skippedLines };
}

/**
 * Parses a completion into its ordered list of items. Never throws on any string.
 *
 * `"default"` handles numbered lines ("1.", "1)", "1 -"), bullets, markdown emphasis, quotes, trailing
 * comments after the year and blank lines; a line with a list marker but no "Title (Year)" becomes a
 * `format` item (it keeps its rank), any other line without an item is skipped and counted.
 * `"rankGrpo"` reproduces upstream `process_rec_raw` exactly (see items-rankgrpo.ts), quirks included.
 */
export function parseItems(text: string, parser: ItemParser = 'default'): ParseResult {
  if (typeof text !== 'string') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected a string for text but received ${typeof text}`);
  }
  oneOf('parser', parser, ITEM_PARSERS);
  return parser === 'default' ? parseItemsDefault(text) : parseItemsRankGrpo(text);
}

/** Renders items as a numbered list, "1. Title (Year)" per line (the format the parsers read). */
export function renderItems(items: ReadonlyArray<{ title: string; year: number }>): string {
  return items.map((item, i) => `${i + 1}. ${item.title} (${item.year})`).join('\n');
}
