/**
 * Recovers the answers of a CCR completion by their labels: `Answer k: \boxed{…}` counts for
 * problem k only, wherever it appears, so a skipped answer never shifts the grading of later ones.
 */
import { boxedAt, findBoxed } from './boxed.js';

/** How problem k's answer was found. */
export type CcrAnswerStatus = 'correct-format' | 'missing' | 'ambiguous' | 'malformed';

/** Character offsets into the completion, `start` inclusive, `end` exclusive. */
export interface CcrAnswerSpan {
  readonly start: number;
  readonly end: number;
}

/** The answer recovered for one problem. */
export interface CcrExtractedAnswer {
  /**
   * `correct-format`: one complete labelled box (or several with the same content);
   * `ambiguous`: complete boxes with different contents (no credit);
   * `malformed`: the label appears but is not followed by `\boxed{…}`;
   * `missing`: no label, or the text ends inside the box (truncated).
   */
  readonly status: CcrAnswerStatus;
  /** Content of the box, for `correct-format`. */
  readonly answer?: string;
  /**
   * `correct-format`: label start to the end of its first complete box; `ambiguous`: first label to
   * the end of the last box; `malformed`: the label; truncated `missing`: label to the end of text;
   * otherwise `null`.
   */
  readonly span: CcrAnswerSpan | null;
  /** False only for boxes taken by the unlabelled fallback. */
  readonly labelled: boolean;
  /** True when the text ended inside this answer (truncated `missing`). */
  readonly truncated: boolean;
  /** End of the last complete box for this problem; -1 when none. */
  readonly boxEnd: number;
  /** Offset of the first occurrence of this label without a box; -1 when none. */
  readonly malformedAt: number;
  /** Recovered, and every recovered answer with a smaller label comes before it. */
  readonly inOrder: boolean;
}

/** Options of {@link extractAnswers}. */
export interface CcrExtractOptions {
  /**
   * When the completion carries no `Answer k:` label at all, take its `\boxed{…}` answers in order
   * as answers 1, 2, … (repeated identical boxes count once; more boxes than problems make every
   * answer ambiguous). Positional, hence off: one skipped answer shifts all later ones.
   * @defaultValue false
   */
  readonly allowUnlabelled?: boolean;
}

/** One occurrence of `Answer k:` in the text. */
interface LabelHit {
  readonly k: number;
  readonly start: number;
  readonly kind: 'complete' | 'truncated' | 'malformed';
  readonly content: string;
  readonly end: number;
}

const LABEL = /Answer[ \t]*(\d{1,3})[ \t]*::?/g;
// Between the label and the box: spaces, markdown bold, math-mode openers.
const FILLER = /(?:[\s*$]|\\\(|\\\[)*/y;
const BOX_PREFIXES = ['\\boxed{', '\\fbox{'];

function readLabel(text: string, k: number, start: number, afterLabel: number): LabelHit {
  FILLER.lastIndex = afterLabel;
  FILLER.exec(text);
  const at = FILLER.lastIndex;
  const rest = text.slice(at, at + 8);
  if (BOX_PREFIXES.some((p) => p.startsWith(rest))) return { k, start, kind: 'truncated', content: '', end: text.length };
  const box = boxedAt(text, at);
  if (!box) return { k, start, kind: 'malformed', content: '', end: at };
  return { k, start, kind: box.closed ? 'complete' : 'truncated', content: box.content, end: box.end };
}

function labelHits(text: string, n: number): LabelHit[][] {
  const byProblem: LabelHit[][] = Array.from({ length: n }, () => []);
  for (const m of text.matchAll(LABEL)) {
    const k = Number(m[1]);
    if (k >= 1 && k <= n) byProblem[k - 1].push(readLabel(text, k, m.index, m.index + m[0].length));
  }
  return byProblem;
}

const sameContent = (a: string, b: string) => a.replace(/\s+/g, '') === b.replace(/\s+/g, '');

type Draft = Omit<CcrExtractedAnswer, 'inOrder'> & { readonly firstStart: number };

function classify(hits: readonly LabelHit[], labelled: boolean): Draft {
  const complete = hits.filter((h) => h.kind === 'complete');
  const malformedAt = hits.find((h) => h.kind === 'malformed')?.start ?? -1;
  const base = { labelled, malformedAt, truncated: false, boxEnd: -1, firstStart: -1 };
  if (complete.length > 0) {
    const [first, last] = [complete[0], complete[complete.length - 1]];
    const unique = complete.every((h) => sameContent(h.content, first.content));
    const shared = { ...base, boxEnd: last.end, firstStart: first.start };
    return unique
      ? { ...shared, status: 'correct-format', answer: first.content, span: { start: first.start, end: first.end } }
      : { ...shared, status: 'ambiguous', span: { start: first.start, end: last.end } };
  }
  const cut = hits.find((h) => h.kind === 'truncated');
  if (cut) return { ...base, status: 'missing', truncated: true, span: { start: cut.start, end: cut.end } };
  const bad = hits.find((h) => h.kind === 'malformed');
  if (bad) return { ...base, status: 'malformed', span: { start: bad.start, end: bad.end } };
  return { ...base, status: 'missing', span: null };
}

function withOrder(drafts: readonly Draft[]): CcrExtractedAnswer[] {
  return drafts.map(({ firstStart, ...answer }, i) => {
    const inOrder = firstStart >= 0 && drafts.every((other, j) => j >= i || other.firstStart < firstStart);
    return { ...answer, inOrder };
  });
}

/** The unlabelled fallback: boxes in order, consecutive identical contents merged. */
function unlabelled(text: string, n: number): Draft[] {
  const boxes = findBoxed(text).filter((box, i, all) => i === 0 || !box.closed || !sameContent(box.content, all[i - 1].content));
  const hits = boxes.map((box): LabelHit => ({ k: 0, start: box.start, kind: box.closed ? 'complete' : 'truncated', content: box.content, end: box.end }));
  const closed = hits.filter((h) => h.kind === 'complete').length;
  // More distinct boxes than problems cannot be mapped: classify() finds them ambiguous.
  return Array.from({ length: n }, (_, i) => classify(closed > n ? hits : hits.slice(i, i + 1), false));
}

/**
 * Recovers the answers to problems 1…n from one completion by their `Answer k:` labels
 * (`Answer k: \boxed{…}`, also `Answer k::`, `**Answer k:**`, `$\boxed{…}$`). Never throws on any
 * text; O(text length). Spans index the completion.
 */
export function extractAnswers(completion: string, n: number, options: CcrExtractOptions = {}): CcrExtractedAnswer[] {
  if (options.allowUnlabelled && !/Answer[ \t]*\d{1,3}[ \t]*:/.test(completion)) return withOrder(unlabelled(completion, n));
  return withOrder(labelHits(completion, n).map((hits) => classify(hits, true)));
}
