/**
 * Splits a normalised answer into its top-level structure (lists, unions, relations, bracketed
 * groups, matrices) before any expression is parsed, so that intervals such as `[1,2)` and
 * comma lists such as `n=2,3,4` are compared part by part. Scans once, O(length).
 */
import { parseNumeric } from './numeric.js';

/** One answer, as a tree of comparable parts. */
export type AnswerNode =
  | { readonly kind: 'expr'; readonly latex: string }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'list' | 'union'; readonly items: readonly AnswerNode[] }
  | { readonly kind: 'group'; readonly open: string; readonly close: string; readonly items: readonly AnswerNode[] }
  | { readonly kind: 'relation'; readonly ops: readonly string[]; readonly sides: readonly AnswerNode[] }
  | { readonly kind: 'matrix'; readonly rows: readonly (readonly AnswerNode[])[] };

/** Raised for input deeper than `maxDepth`; callers turn it into `unparsable`. */
export class TooDeep extends Error {}

const OPENERS = ['\\{', '\\langle', '(', '[', '{'];
const CLOSERS = ['\\}', '\\rangle', ')', ']', '}'];
const RELATIONS = ['\\le', '\\ge', '\\ne', '\\in', '=', '<', '>'];
const FLIPPED: Readonly<Record<string, string>> = { '>': '<', '\\ge': '\\le' };

const startsCommand = (text: string, at: number, name: string) =>
  text.startsWith(name, at) && !(name.startsWith('\\') && /[a-zA-Z]/.test(name.slice(-1)) && /[a-zA-Z]/.test(text[at + name.length] ?? ''));

const tokenAt = (text: string, at: number, list: readonly string[]) => list.find((t) => startsCommand(text, at, t));

interface TopLevel {
  /** [offset, token] of every separator found at depth 0. */
  readonly separators: readonly (readonly [number, string])[];
  /** Offset of the closer that returns to depth 0 after an opener at offset 0, or -1. */
  readonly firstCloseAt: number;
}

function scanTopLevel(text: string, separators: readonly string[], maxDepth: number): TopLevel {
  const found: [number, string][] = [];
  let depth = 0;
  let firstCloseAt = -1;
  for (let i = 0; i < text.length; ) {
    const env = /^\\(begin|end)\{[a-zA-Z*]*\}/.exec(text.slice(i, i + 24));
    const opener = env ? (env[1] === 'begin' ? env[0] : undefined) : tokenAt(text, i, OPENERS);
    const closer = env ? (env[1] === 'end' ? env[0] : undefined) : tokenAt(text, i, CLOSERS);
    const separator = depth === 0 ? tokenAt(text, i, separators) : undefined;
    if (opener && ++depth > maxDepth) throw new TooDeep(`nesting deeper than ${maxDepth}`);
    if (closer && --depth === 0 && firstCloseAt < 0) firstCloseAt = i;
    if (!opener && !closer && separator) found.push([i, separator]);
    i += (opener ?? closer ?? separator ?? (text[i] === '\\' ? '\\x' : 'x')).length;
  }
  return { separators: found, firstCloseAt };
}

function splitAt(text: string, separators: readonly (readonly [number, string])[]): string[] {
  const parts: string[] = [];
  let from = 0;
  for (const [at, token] of separators) {
    parts.push(text.slice(from, at).trim());
    from = at + token.length;
  }
  parts.push(text.slice(from).trim());
  return parts;
}

function parseRelation(text: string, found: readonly (readonly [number, string])[], maxDepth: number): AnswerNode {
  const sides = splitAt(text, found).map((side) => parseAnswer(side, maxDepth));
  const ops = found.map(([, op]) => op);
  if (ops.length === 1 && ops[0] in FLIPPED) return { kind: 'relation', ops: [FLIPPED[ops[0]]], sides: sides.reverse() };
  return { kind: 'relation', ops, sides };
}

function parseMatrix(text: string, maxDepth: number): AnswerNode | undefined {
  const m = /^\\begin\{([pbvBV]?matrix|array)\}(?:\{[^{}]*\})?([\s\S]*)\\end\{\1\}$/.exec(text);
  if (!m) return undefined;
  const rows = m[2].split('\\\\').map((row) => row.trim()).filter((row) => row !== '');
  return { kind: 'matrix', rows: rows.map((row) => row.split('&').map((cell) => parseAnswer(cell.trim(), maxDepth))) };
}

function parseGroup(text: string, maxDepth: number): AnswerNode | undefined {
  const open = tokenAt(text, 0, OPENERS);
  const close = CLOSERS.find((c) => text.endsWith(c));
  if (!open || !close || open === '{') return undefined;
  const inner = text.slice(open.length, text.length - close.length);
  const { separators } = scanTopLevel(inner, [','], maxDepth);
  if (separators.length === 0 && open === '(' && close === ')') return parseAnswer(inner.trim(), maxDepth);
  return { kind: 'group', open, close, items: splitAt(inner, separators).map((item) => parseAnswer(item, maxDepth)) };
}

/** Letters run together outside a command ("Evelyn", "odd") are words, compared as text only. */
const isWordy = (text: string) => /(?<![\\a-zA-Z])[a-zA-Z]{2,}/.test(text.replace(/\\[a-zA-Z]+/g, '\\'));

/** Parses a normalised answer into its structure; throws `TooDeep` past `maxDepth`. */
export function parseAnswer(text: string, maxDepth: number): AnswerNode {
  const commas = scanTopLevel(text, [','], maxDepth).separators;
  if (commas.length > 0) return { kind: 'list', items: splitAt(text, commas).map((item) => parseAnswer(item, maxDepth)) };
  const unions = scanTopLevel(text, ['\\cup'], maxDepth).separators;
  if (unions.length > 0) return { kind: 'union', items: splitAt(text, unions).map((item) => parseAnswer(item, maxDepth)) };
  const relations = scanTopLevel(text, RELATIONS, maxDepth).separators;
  if (relations.length > 0) return parseRelation(text, relations, maxDepth);
  const { firstCloseAt } = scanTopLevel(text, [], maxDepth);
  const closeToken = CLOSERS.find((c) => text.endsWith(c));
  const wrapped = closeToken !== undefined && firstCloseAt === text.length - closeToken.length;
  const structured = text.startsWith('\\begin') ? parseMatrix(text, maxDepth) : wrapped ? parseGroup(text, maxDepth) : undefined;
  if (structured) return structured;
  const textMatch = /^\\text\{([^{}]*)\}$/.exec(text);
  if (textMatch) return { kind: 'text', text: textMatch[1].trim().toLowerCase() };
  return isWordy(text) && !parseNumeric(text) ? { kind: 'text', text: text.toLowerCase() } : { kind: 'expr', latex: text };
}
