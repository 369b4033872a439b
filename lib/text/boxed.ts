/**
 * Balanced-brace parsing of `\boxed{…}` (and `\fbox{…}`): nested braces (`\frac{a}{b}`) are
 * counted, escaped braces (`\{`, `\}`) are not, and a box the text ends inside is reported as
 * unclosed rather than guessed.
 */

/** A `\boxed{…}` found in text. Offsets index the text: `start` at the backslash, `end` just after `}`. */
export interface BoxedMatch {
  /** The text between the outer braces (empty when unclosed). */
  readonly content: string;
  readonly start: number;
  /** Just after the closing brace; the text length when unclosed. */
  readonly end: number;
  /** False when the text ended before the closing brace (a truncated answer). */
  readonly closed: boolean;
}

const BOX_COMMAND = /\\(?:boxed|fbox)\s*\{/y;

/**
 * Index of the `}` that closes the `{` at `open`, or -1 when the text ends first.
 * A backslash escapes the next character, so `\{` and `\}` are not counted.
 */
export function closingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 /* \ */) i++;
    else if (c === 123 /* { */) depth++;
    else if (c === 125 /* } */ && --depth === 0) return i;
  }
  return -1;
}

/** The box whose command starts at `start` (e.g. `\boxed{`), or `undefined` when there is none. */
export function boxedAt(text: string, start: number): BoxedMatch | undefined {
  BOX_COMMAND.lastIndex = start;
  const command = BOX_COMMAND.exec(text);
  if (!command || command.index !== start) return undefined;
  const open = start + command[0].length - 1;
  const close = closingBrace(text, open);
  if (close < 0) return { content: '', start, end: text.length, closed: false };
  return { content: text.slice(open + 1, close), start, end: close + 1, closed: true };
}

/** Every `\boxed{…}` in `text`, in order (a box nested inside another is not listed separately). */
export function findBoxed(text: string): BoxedMatch[] {
  const found: BoxedMatch[] = [];
  for (let from = text.indexOf('\\', 0); from >= 0 && from < text.length; ) {
    const box = boxedAt(text, from);
    if (box) found.push(box);
    from = text.indexOf('\\', box ? box.end : from + 1);
  }
  return found;
}

/** Content of the last closed `\boxed{…}`, or `undefined`. */
export function lastBoxed(text: string): string | undefined {
  const boxes = findBoxed(text).filter((box) => box.closed);
  return boxes.length > 0 ? boxes[boxes.length - 1].content : undefined;
}
