/** Markdown pieces of reports: numbers, intervals and tables. */
import type { Interval } from './bootstrap.js';

/** A number with `digits` decimals; NaN, null and ±Infinity print as "—". */
export function formatNumber(value: number | null | undefined, digits = 3): string {
  return value === null || value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(digits);
}

/** "0.123 [0.110, 0.135]"; a signed form ("+1.20 [0.40, 2.00]") for differences. */
export function formatInterval(interval: Interval, digits = 3, signed = false): string {
  const estimate = formatNumber(interval.estimate, digits);
  const sign = signed && interval.estimate > 0 ? '+' : '';
  return `${sign}${estimate} [${formatNumber(interval.low, digits)}, ${formatNumber(interval.high, digits)}]`;
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** A GitHub-flavoured markdown table; the first column left-aligned, the others right-aligned. */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  const rule = `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** File-name-safe form of a label: lower case, runs of other characters → "-". */
export function slug(label: string): string {
  return label.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'figure';
}
