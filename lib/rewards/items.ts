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

/** Which UTF-16 code units count as whitespace when lines are trimmed. */
export type IsSpace = (code: number) => boolean;

const JS_SPACE = /\s/;

/** JavaScript's own whitespace set (that of `String.prototype.trim` and `\s`). */
export const isJsSpace: IsSpace = (code) =>
  code === 32 || (code >= 9 && code <= 13) || (code > 127 && JS_SPACE.test(String.fromCharCode(code)));

/** Calls `visit(start, end, index)` for each non-empty line of `text` (split on "\n"), trimmed of `isSpace` characters. */
export function forEachLine(text: string, isSpace: IsSpace, visit: (start: number, end: number, index: number) => void): void {
  let start = 0;
  for (let index = 0; start <= text.length; index++) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    let first = start;
    while (first < end && isSpace(text.charCodeAt(first))) first++;
    let last = end;
    while (last > first && isSpace(text.charCodeAt(last - 1))) last--;
    if (first < last) visit(first, last, index);
    start = end + 1;
  }
}

/** Non-empty lines of `text` (split on "\n"), trimmed of `isSpace` characters, with their spans. */
export function nonEmptyLines(text: string, isSpace: IsSpace = isJsSpace): TextLine[] {
  const lines: TextLine[] = [];
  forEachLine(text, isSpace, (start, end, index) => lines.push({ text: text.slice(start, end), start, end, index }));
  return lines;
}

// The default parser reads each line in place in the completion (no per-line strings or match arrays;
// it runs ~8k lines per GRPO step), so its patterns use [^\S\n] for "space" and never cross a line.
// "1." "12)" "3 -" (dash needs a space after it, so "3-Iron" stays), optionally inside **…**; or a bullet.
const LIST_MARKER = /(?:[-*•+·‣◦▪][^\S\n]+|[*_]*\d{1,3}[^\S\n]*(?:[.)]|[-–—](?=[^\S\n]))[*_]*[^\S\n]*)/y;
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

/** Where the text after the list marker of line [start, end) begins (`start` when there is no marker). */
function markerEnd(text: string, start: number, end: number): number {
  LIST_MARKER.lastIndex = start;
  if (!LIST_MARKER.test(text)) return start;
  // trailing spaces cut from the line can extend a match past `end`: judge that rare line on its own
  return LIST_MARKER.lastIndex <= end ? LIST_MARKER.lastIndex : start + listMarkerLength(text.slice(start, end));
}

/** Length of the list marker ("1.", "2)", "3 -", "-", "*", "•", …) that starts `line`, or 0. */
export function listMarkerLength(line: string): number {
  return markerEnd(line, 0, line.length);
}

/** Index of the first "(YYYY)" (spaces allowed inside) in [from, end), or −1. */
function yearOpen(text: string, from: number, end: number): number {
  for (let open = text.indexOf('(', from); open >= 0 && open < end; open = text.indexOf('(', open + 1)) {
    YEAR_AT.lastIndex = open;
    if (YEAR_AT.test(text) && YEAR_AT.lastIndex <= end) return open;
  }
  return -1;
}

/** The four digits of the "(YYYY)" that starts at `open`. */
function yearAt(text: string, open: number): number {
  let digit = open + 1;
  while (isJsSpace(text.charCodeAt(digit))) digit++;
  let year = 0;
  for (const end = digit + 4; digit < end; digit++) year = year * 10 + text.charCodeAt(digit) - 48;
  return year;
}

function parseLine(text: string, start: number, end: number, line: number): ParsedItem | null {
  const body = markerEnd(text, start, end);
  const open = yearOpen(text, body, end);
  const span: [number, number] = [start, end];
  if (open >= 0) {
    const title = cleanTitle(text.slice(body, open));
    if (title.length > 0) return { title, year: yearAt(text, open), span, line };
  }
  // A marked line without a usable "Title (Year)" still takes a rank (as a `format` item); prose does not.
  return body > start ? { title: cleanTitle(text.slice(body, end)), year: null, span, line } : null;
}

function parseItemsDefault(text: string): ParseResult {
  const items: ParsedItem[] = [];
  let skippedLines = 0;
  forEachLine(text, isJsSpace, (start, end, line) => {
    const item = parseLine(text, start, end, line);
    if (item) items.push(item);
    else skippedLines++;
  });
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
