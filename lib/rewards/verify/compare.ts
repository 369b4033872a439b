/**
 * Compares two answer structures (see structure.ts) part by part. Scalars go to the numeric fast
 * path when both sides are plain numbers, else to the LaTeX comparison.
 */
import { compareScalars, type ScalarLimits } from './latex.js';
import { compareNumericText } from './numeric.js';
import type { AnswerNode } from './structure.js';
import type { Verdict } from './verdict.js';

/** Limits for one whole comparison; `budget.steps` is shared by every part. */
export interface CompareLimits extends ScalarLimits {
  readonly maxItems: number;
}

const decided = (correct: boolean, method: string, detail?: string): Verdict => ({
  verdict: correct ? 'correct' : 'incorrect',
  method,
  ...(detail === undefined ? {} : { detail }),
});

const OVER_BUDGET: Verdict = { verdict: 'unparsable', method: 'limit', detail: 'step budget exhausted' };

/** All parts must be correct; one incorrect part decides; otherwise undecided parts make it unparsable. */
function combine(verdicts: Iterable<Verdict>, method: string): Verdict {
  let undecided: Verdict | undefined;
  for (const v of verdicts) {
    if (v.verdict === 'incorrect') return v;
    if (v.verdict === 'unparsable') undecided ??= v;
  }
  return undecided ?? decided(true, method);
}

function* pairwise(given: readonly AnswerNode[], truth: readonly AnswerNode[], limits: CompareLimits) {
  for (let i = 0; i < truth.length; i++) yield compareNodes(given[i], truth[i], limits);
}

function compareOrdered(given: readonly AnswerNode[], truth: readonly AnswerNode[], limits: CompareLimits, method: string): Verdict {
  if (given.length !== truth.length) return decided(false, method, `${given.length} parts, expected ${truth.length}`);
  return combine(pairwise(given, truth, limits), method);
}

/** Multiset matching: every answer part pairs with a distinct reference part. */
function compareUnordered(given: readonly AnswerNode[], truth: readonly AnswerNode[], limits: CompareLimits, method: string): Verdict {
  if (given.length !== truth.length) return decided(false, method, `${given.length} parts, expected ${truth.length}`);
  if (truth.length > limits.maxItems) return { verdict: 'unparsable', method: 'limit', detail: `more than ${limits.maxItems} parts` };
  const used = new Array<boolean>(truth.length).fill(false);
  let undecided: Verdict | undefined;
  for (const part of given) {
    const match = truth.findIndex((candidate, j) => {
      if (used[j]) return false;
      const v = compareNodes(part, candidate, limits);
      if (v.verdict === 'unparsable') undecided ??= v;
      return v.verdict === 'correct';
    });
    if (match < 0) return undecided ?? decided(false, method, 'a part has no equal in the reference');
    used[match] = true;
  }
  return decided(true, method);
}

function compareScalarText(given: string, truth: string, limits: CompareLimits): Verdict {
  return compareNumericText(given, truth) ?? compareScalars(given, truth, limits);
}

const SIMPLE_NAME = /^[a-zA-Z](?:_\{?[a-zA-Z0-9]+\}?)?(?:\([a-zA-Z]\))?$/;
const isName = (node: AnswerNode | undefined) => node?.kind === 'expr' && SIMPLE_NAME.test(node.latex);

/** `x = 5` against `5` (either way round), `x \in [1,2]` against `[1,2]`: compare the value side. */
function valueSide(node: AnswerNode): AnswerNode | undefined {
  if (node.kind !== 'relation' || !isName(node.sides[0])) return undefined;
  const assigns = node.ops.every((op) => op === '=') || (node.ops.length === 1 && node.ops[0] === '\\in');
  return assigns ? node.sides[node.sides.length - 1] : undefined;
}

function compareRelations(given: AnswerNode & { kind: 'relation' }, truth: AnswerNode & { kind: 'relation' }, limits: CompareLimits): Verdict {
  if (given.ops.join() !== truth.ops.join()) return decided(false, 'structure', 'different relations');
  const direct = compareOrdered(given.sides, truth.sides, limits, 'relation');
  if (direct.verdict === 'correct' || given.ops.join() !== '=') return direct;
  const swapped = compareOrdered([...given.sides].reverse(), truth.sides, limits, 'relation');
  if (swapped.verdict === 'correct') return swapped;
  const [gl, gr, tl, tr] = [...given.sides, ...truth.sides];
  if (![gl, gr, tl, tr].every((n) => n.kind === 'expr')) return direct;
  const latex = (n: AnswerNode) => (n as { latex: string }).latex;
  // a = b and c = d are the same equation when a − b ≡ ±(c − d); never when both merely "reduce to 0".
  const difference = compareScalars(`(${latex(gl)})-(${latex(gr)})`, `(${latex(tl)})-(${latex(tr)})`, limits);
  if (difference.verdict === 'correct') return difference;
  const opposite = compareScalars(`(${latex(gr)})-(${latex(gl)})`, `(${latex(tl)})-(${latex(tr)})`, limits);
  return opposite.verdict === 'correct' ? opposite : direct;
}

const isSet = (node: AnswerNode) => node.kind === 'group' && node.open === '\\{';
const itemsOf = (node: AnswerNode) => ('items' in node ? node.items : []);

/** Compares two answer structures; shares `limits.budget` across all parts. */
export function compareNodes(given: AnswerNode, truth: AnswerNode, limits: CompareLimits): Verdict {
  if (--limits.budget.steps < 0) return OVER_BUDGET;
  if (given.kind === 'relation' && truth.kind === 'relation') return compareRelations(given, truth, limits);
  const givenValue = truth.kind !== 'relation' ? valueSide(given) : undefined;
  if (givenValue) return compareNodes(givenValue, truth, limits);
  const truthValue = given.kind !== 'relation' ? valueSide(truth) : undefined;
  if (truthValue) return compareNodes(given, truthValue, limits);
  if ((isSet(given) || given.kind === 'list') && (isSet(truth) || truth.kind === 'list')) {
    return compareUnordered(itemsOf(given), itemsOf(truth), limits, 'set');
  }
  if (given.kind !== truth.kind) return decided(false, 'structure', `${given.kind} answer for a ${truth.kind} reference`);
  switch (truth.kind) {
    case 'expr':
      return compareScalarText((given as typeof truth).latex, truth.latex, limits);
    case 'text':
      return decided((given as typeof truth).text === truth.text, 'text');
    case 'union':
      return compareUnordered((given as typeof truth).items, truth.items, limits, 'union');
    case 'group': {
      const g = given as typeof truth;
      if (g.open !== truth.open || g.close !== truth.close) return decided(false, 'structure', 'different brackets');
      return compareOrdered(g.items, truth.items, limits, 'tuple');
    }
    case 'matrix': {
      const g = given as typeof truth;
      if (g.rows.length !== truth.rows.length) return decided(false, 'matrix', 'different row counts');
      return combine(truth.rows.map((row, i) => compareOrdered(g.rows[i], row, limits, 'matrix')), 'matrix');
    }
    default:
      return decided(false, 'structure', 'relation');
  }
}
