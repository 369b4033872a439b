// Lines of text with their trimmed character extents (the spans item parsers report and token segments read).

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
