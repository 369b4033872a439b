/**
 * String normalisation of final answers: the union of verl's `strip_string` and
 * `normalize_final_answer` rules that do not change meaning, without their asserts.
 * Percent signs, dollar signs and degree marks are treated as units and dropped, so "20\%" equals
 * "20" but never 0.2 or 2000 (no percent×100 acceptance).
 */
import { closingBrace } from '../../text/boxed.js';

const WRAPPERS: readonly (readonly [string, string])[] = [
  ['$$', '$$'],
  ['$', '$'],
  ['\\(', '\\)'],
  ['\\[', '\\]'],
  ['**', '**'],
];

const REPLACEMENTS: readonly (readonly [RegExp, string])[] = [
  [/\\[dt]frac(?![a-zA-Z])/g, '\\frac'],
  [/\\(?:mbox|textrm|textnormal|textbf|textit|mathrm|operatorname)\s*\{/g, '\\text{'],
  [/\\(?:left|right|big|Big|bigg|Bigg)(?![a-zA-Z])\.?/g, ''],
  [/(?<!\\)\\(?:displaystyle|textstyle|!|,|;|:|quad|qquad|\s)(?![a-zA-Z])|~/g, ' '],
  [/\^\s*\{?\s*\\circ\s*\}?|\\degree(?![a-zA-Z])|°/g, ''],
  [/\\?%|\\\$|\$/g, ''],
  [/\\(?:leq|leqslant)(?![a-zA-Z])/g, '\\le'],
  [/\\(?:geq|geqslant)(?![a-zA-Z])/g, '\\ge'],
  [/\\neq(?![a-zA-Z])/g, '\\ne'],
  [/\\lvert|\\rvert|\\vert/g, '|'],
  [/\{,\}/g, ','],
  // "a_1+a_2": brace one-character subscripts, or the parser lets the subscript swallow the sum.
  [/_([0-9a-zA-Z])/g, '_{$1}'],
  // "\frac9{19}", "\frac{270}7": brace single-character arguments (the parser needs braces).
  [/\\frac\s*(?:\{([^{}]*)\}|([0-9a-zA-Z]))\s*(?:\{([^{}]*)\}|([0-9a-zA-Z]))/g, '\\frac{$1$2}{$3$4}'],
  [/−/g, '-'],
  [/\*\*/g, ''],
];

// "1,234,567" → "1234567": a comma followed by exactly three digits is a thousands separator.
const THOUSANDS = /(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d]|,\d)/g;

function unwrap(text: string): string {
  for (let changed = true; changed; ) {
    changed = false;
    for (const [open, close] of WRAPPERS) {
      if (text.length >= open.length + close.length && text.startsWith(open) && text.endsWith(close)) {
        text = text.slice(open.length, text.length - close.length).trim();
        changed = true;
      }
    }
  }
  return text;
}

// A trailing "\text{ cm}" or "\text{apples}^2" after a value is a unit.
const TRAILING_TEXT_UNIT = /^(.*[\d}a-zA-Z)])\s*\\text\{\s*[A-Za-z][A-Za-z .]*\}(?:\^\{?[23]\}?)?$/;
const WHOLE_TEXT = /^\\text\{([^{}]*)\}$/;
const WHOLE_BOX = /^\\(?:boxed|fbox)\{[\s\S]*\}$/;

/** Collapses whitespace, keeping one space only between two letters or digits ("\cos x", "2 3"). */
function squeezeSpaces(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/ (?![a-zA-Z0-9])|(?<![a-zA-Z0-9]) /g, '').trim();
}

const PLAIN_NUMBER = /^-?\d{1,15}(?:\.\d{1,15})?$/;

/** Normalises one final answer for comparison; never throws, O(length). */
export function normalizeAnswer(answer: string): string {
  if (PLAIN_NUMBER.test(answer)) return answer;
  let text = unwrap(answer.trim());
  if (WHOLE_BOX.test(text) && closingBrace(text, text.indexOf('{')) === text.length - 1) {
    text = text.slice(text.indexOf('{') + 1, -1);
  }
  for (const [pattern, replacement] of REPLACEMENTS) text = text.replace(pattern, replacement);
  text = text.replace(THOUSANDS, (digits) => digits.replace(/,/g, ''));
  text = unwrap(text.trim()).replace(/[.\s]+$/, '');
  const unit = TRAILING_TEXT_UNIT.exec(text);
  if (unit) text = unit[1];
  const whole = WHOLE_TEXT.exec(text.trim());
  if (whole) text = whole[1];
  text = squeezeSpaces(text);
  const choice = /^\(([A-Z])\)$/.exec(text);
  return choice ? choice[1] : text;
}
