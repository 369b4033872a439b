import { nonEmptyLines, type IsSpace } from '../text/lines.js';
import type { ParsedItem, ParseResult } from './parsed-item.js';

// Python's str.isspace / `\s` set (JS `\s` lacks \x1c-\x1f and \x85 and adds \ufeff).
const PY_SPACE = '[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const py = (source: string, flags = 'u'): RegExp => new RegExp(source.replaceAll('\\s', PY_SPACE), flags);

const STRIP_START = py('^\\s+');
const STRIP_END = py('\\s+$');
const SPACE_RUN = py('\\s+', 'gu');
const FORMAT_START = /^[*_\-#]+/u;
const FORMAT_END = /[*_\-#]+$/u;
const BULLET_OR_NUMBER = py('^(?:[*_\\-#]+\\s+|(?:\\p{Nd}+\\s*[.)、\\-—–]\\s+))');
const HEADING = py('^#+\\s*');
const ITEM = py('^(.+?)\\s+\\((\\p{Nd}{4})\\)', 'su'); // Python's \d: every Unicode decimal digit
const INNER_PARENTHESES = /\([^()]*\)/gu;

const PY_SPACE_CHAR = py('\\s');
const DIGIT = /\p{Nd}/u;
// Python int() of a str: Unicode whitespace around, one sign, decimal digits with single underscores between.
const PY_INT = py('^\\s*([+-]?)(\\p{Nd}+(?:_\\p{Nd}+)*)\\s*$');
const isPySpace: IsSpace = (code) => PY_SPACE_CHAR.test(String.fromCharCode(code));
const strip = (s: string): string => s.replace(STRIP_START, '').replace(STRIP_END, '');

function delSpace(s: string): string {
  return strip(strip(s).replace(SPACE_RUN, ' '));
}

function delFormat(s: string): string {
  let text = strip(s);
  for (;;) {
    let next = strip(text.replace(FORMAT_START, ''));
    next = strip(next.replace(FORMAT_END, ''));
    next = strip(next.replace(BULLET_OR_NUMBER, ''));
    next = next.replace(HEADING, '');
    if (next === text) return text;
    text = next;
  }
}

function removeQuotes(s: string): string {
  const quoted = (s.startsWith('"') && s.endsWith('"')) || (s.startsWith("'") && s.endsWith("'"));
  return quoted ? s.slice(1, -1) : s;
}

function cleanUpstreamTitle(title: string): string {
  const step = (t: string): string => removeQuotes(delFormat(delSpace(strip(t).replace(INNER_PARENTHESES, ''))));
  let current = title;
  for (let next = step(current); next !== current; next = step(current)) current = next;
  return current;
}

/** The value of a Unicode decimal digit: digits come in runs of ten from 0, so it is the offset in its run. */
function digitValue(digit: string): number {
  let start = digit.codePointAt(0) as number;
  while (DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return ((digit.codePointAt(0) as number) - start) % 10;
}

/**
 * Upstream `libs/metrics_align.py::_safe_int_year` (yaochenzhu/Rank-GRPO): `int(str(y))`, None when it
 * raises. A string parses as Python's int() does ("1999", " +1999 ", "1_999", other Unicode digits);
 * an integer number is itself; anything else (a fraction, "n/a", a boolean, null) gives null.
 * A JS number cannot tell 1999.0 (dropped upstream, str gives "1999.0") from 1999: both are 1999.
 */
export function upstreamYear(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : null;
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : null;
  const match = typeof value === 'string' ? PY_INT.exec(value) : null;
  if (!match) return null;
  let year = 0;
  for (const digit of match[2].replaceAll('_', '')) year = year * 10 + digitValue(digit);
  return Number.isSafeInteger(year) ? (match[1] === '-' ? -year : year) : null;
}

/**
 * Upstream `libs/utils.py::process_rec_raw` (yaochenzhu/Rank-GRPO): per non-empty stripped line,
 * `remove_quotes(del_format(del_space(line)))`, then `^(.+?)\s+\((\d{4})\)`; non-matching lines are
 * skipped; the title is cleaned (`del_parentheses` removes every innermost group) until stable.
 * Quirk kept: numbering needs whitespace after its punctuation, so "4.Se7en (1995)" gives "4.Se7en".
 * Years are any four Unicode decimal digits, as Python's `\d{4}`, read by `int()` ({@link upstreamYear}).
 */
export function parseItemsRankGrpo(text: string): ParseResult {
  const items: ParsedItem[] = [];
  let skippedLines = 0;
  for (const line of nonEmptyLines(text, isPySpace)) {
    const match = ITEM.exec(removeQuotes(delFormat(delSpace(line.text))));
    if (!match) {
      skippedLines++;
      continue;
    }
    items.push({ title: cleanUpstreamTitle(match[1]), year: upstreamYear(match[2]), span: [line.start, line.end], line: line.index });
  }
  return { items, skippedLines };
}
