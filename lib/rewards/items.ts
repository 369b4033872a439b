import { GrpoError } from '../errors.js';
import { oneOf } from '../validate.js';
import { isJsSpace, forEachLine } from '../text/lines.js';
import { cleanTitle, creatorTitle, trailingGroupOpen, yearOpen } from '../text/title.js';
import { parseItemsRankGrpo } from './items-rankgrpo.js';
import type { ParsedItem, ParseResult } from './parsed-item.js';

/** Which parser turns a completion into items: films ("Title (Year)", ours or upstream's) or creator-keyed items ("Title (Creator)"). */
export type ItemParser = 'default' | 'rankGrpo' | 'creator';

export const ITEM_PARSERS: readonly ItemParser[] = Object.freeze(['default', 'rankGrpo', 'creator']);


// The default parser reads each line in place in the completion (no per-line strings or match arrays;
// it runs ~8k lines per GRPO step), so its patterns use [^\S\n] for "space" and never cross a line.
// "1." "12)" "3 -" (dash needs a space after it, so "3-Iron" stays), optionally inside **…**; or a bullet.
const LIST_MARKER = /(?:[-*•+·‣◦▪][^\S\n]+|[*_]*\d{1,3}[^\S\n]*(?:[.)]|[-–—](?=[^\S\n]))[*_]*[^\S\n]*)/y;

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

/** A "Title (Creator)" line: its item under {@link creatorTitle} with year 0; a marked line without one is a `format` item. */
function parseCreatorLine(text: string, start: number, end: number, line: number): ParsedItem | null {
  const body = markerEnd(text, start, end);
  const open = trailingGroupOpen(text, body, end);
  const span: [number, number] = [start, end];
  const title = open < 0 ? '' : cleanTitle(text.slice(body, open));
  const creator = open < 0 ? '' : text.slice(open + 1, end - 1).trim();
  if (title.length > 0 && creator.length > 0) return { title: creatorTitle(title, creator), year: 0, span, line };
  return body > start ? { title: cleanTitle(text.slice(body, end)), year: null, span, line } : null;
}

function parseLines(text: string, parseOne: typeof parseLine): ParseResult {
  const items: ParsedItem[] = [];
  let skippedLines = 0;
  forEachLine(text, isJsSpace, (start, end, line) => {
    const item = parseOne(text, start, end, line);
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
 * `"creator"` reads "Title (Creator)" lines (books, music) as the default parser reads films; each item's title is
 * `creatorTitle(title, creator)` and its year 0 (see creatorTitle).
 */
export function parseItems(text: string, parser: ItemParser = 'default'): ParseResult {
  if (typeof text !== 'string') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected a string for text but received ${typeof text}`);
  }
  oneOf('parser', parser, ITEM_PARSERS);
  if (parser === 'rankGrpo') return parseItemsRankGrpo(text);
  return parseLines(text, parser === 'creator' ? parseCreatorLine : parseLine);
}

/** Renders items as a numbered list, "1. Title (Year)" per line (the format the parsers read). */
export function renderItems(items: ReadonlyArray<{ title: string; year: number }>): string {
  return items.map((item, i) => `${i + 1}. ${item.title} (${item.year})`).join('\n');
}
