import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../lib/text/catalog.js';
import { parseItems, renderItems } from '../lib/rewards/items.js';
import type { ParsedItem } from '../lib/rewards/parsed-item.js';
import { upstreamYear } from '../lib/rewards/items-rankgrpo.js';
import { checkContext, checkItems, groundTruth, itemTitles, matchHits, type MatchRules } from '../lib/rewards/match.js';
import { normalizeTitle } from '../lib/text/normalize.js';
import type { SeenEntry } from '../lib/text/records.js';
import { cleanTitle, isCleanTitle } from '../lib/text/title.js';
import type { TitleYear } from '../lib/text/catalog.js';

const pairs = (items: ParsedItem[]): [string, number | null][] => items.map((i) => [i.title, i.year]);

describe('parseItems', () => {
  const tv24 =
    '1. **Inception** (2010)\n\n2) Heat (1995) - crime classic\nHere are more:\n3. Alien (Director\'s Cut) (1979)\n4.Se7en (1995)\n- "Heat" (1995)\n6. The Matrix (1999)';

  it('TV24: rankGrpo mode reproduces process_rec_raw, quirks included', () => {
    const { items, skippedLines } = parseItems(tv24, 'rankGrpo');
    expect(pairs(items)).toEqual([
      ['Inception', 2010],
      ['Heat', 1995],
      ['Alien', 1979],
      ['4.Se7en', 1995],
      ['Heat', 1995],
      ['The Matrix', 1999],
    ]);
    expect(skippedLines).toBe(1);
  });

  it('TV24 text: the default parser strips "4." and counts the preamble line', () => {
    const { items, skippedLines } = parseItems(tv24);
    expect(pairs(items)).toEqual([
      ['Inception', 2010],
      ['Heat', 1995],
      ['Alien', 1979],
      ['Se7en', 1995],
      ['Heat', 1995],
      ['The Matrix', 1999],
    ]);
    expect(skippedLines).toBe(1);
    expect(items.map((i) => i.line)).toEqual([0, 2, 4, 5, 6, 7]);
  });

  it('keeps titles that begin with numbers or parentheses and marks list lines without a year as format items', () => {
    const text = '1917 (2019)\n2. 300 (2006)\n3. (500) Days of Summer (2009)\n4) 2001: A Space Odyssey (1968)\n5. Inception\n## Notes';
    const { items, skippedLines } = parseItems(text);
    expect(pairs(items)).toEqual([
      ['1917', 2019],
      ['300', 2006],
      ['(500) Days of Summer', 2009],
      ['2001: A Space Odyssey', 1968],
      ['Inception', null],
    ]);
    expect(skippedLines).toBe(1);
  });

  it('handles bullets, emphasis, curly quotes, CRLF and comments after the year', () => {
    const text = '* **Heat (1995)**\r\n• “Alien” (1979): scary\r\n  - _Up_ (2009) — Pixar  \r\n';
    expect(pairs(parseItems(text).items)).toEqual([
      ['Heat', 1995],
      ['Alien', 1979],
      ['Up', 2009],
    ]);
  });

  it('gives spans that index the trimmed line in the original text', () => {
    const text = '  Here you go:\n\n  1. Heat (1995)  \n2. Up (2009)';
    const { items } = parseItems(text);
    expect(items.map((i) => text.slice(...i.span))).toEqual(['1. Heat (1995)', '2. Up (2009)']);
  });

  it('rejects a non-string text and an unknown parser with GrpoError', () => {
    expect(() => parseItems(42 as unknown as string)).toThrow(/Expected a string for text but received number/);
    expect(() => parseItems('x', 'upstream' as 'default')).toThrow(/Expected parser to be one of "default", "rankGrpo"/);
  });

  it('property: never throws, every span indexes its own line of the original text (both parsers)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('default', 'rankGrpo'), (text, parser) => {
        const { items } = parseItems(text, parser as 'default' | 'rankGrpo');
        const lines = text.split('\n');
        for (const item of items) {
          const [start, end] = item.span;
          expect(start).toBeGreaterThanOrEqual(0);
          expect(end).toBeLessThanOrEqual(text.length);
          expect(text.slice(start, end)).toBe(lines[item.line].trim());
        }
      }),
      { seed: 20261130, numRuns: 500 },
    );
  });

  it('property: rendering a list of clean titles and parsing it back round-trips', () => {
    const title = fc.string({ minLength: 1, maxLength: 30 }).filter(isCleanTitle);
    const item = fc.record({ title, year: fc.integer({ min: 1000, max: 9999 }) });
    fc.assert(
      fc.property(fc.array(item, { maxLength: 25 }), (list) => {
        expect(pairs(parseItems(renderItems(list)).items)).toEqual(list.map((i) => [i.title, i.year]));
      }),
      { seed: 7, numRuns: 300 },
    );
  });

  it('cleanTitle strips wrappers until stable', () => {
    expect(cleanTitle(' **"Alien"  (Director\'s Cut)** -')).toBe('Alien');
    expect(cleanTitle('x')).toBe('x');
    expect(cleanTitle('-')).toBe('');
  });

  it('property: cleanTitle is idempotent (its fast path agrees with its loop)', () => {
    const edge = fc.constantFrom('*', '_', '~', '"', "'", '“', '”', '‘', '’', '«', '»', '-', '—', ':', ';', ',', '(', ')', ' ', 'a', '1');
    const messy = fc.tuple(fc.array(edge, { maxLength: 4 }), fc.string({ maxLength: 12 }), fc.array(edge, { maxLength: 4 }));
    fc.assert(
      fc.property(messy, ([head, body, tail]) => {
        const once = cleanTitle(head.join('') + body + tail.join(''));
        expect(cleanTitle(once)).toBe(once);
      }),
      { seed: 5, numRuns: 1000 },
    );
  });
});

describe('normalizeTitle', () => {
  it('default folds case, width, punctuation and leading/trailing articles', () => {
    for (const t of ['The Matrix', 'Matrix, The', 'the  MATRIX!', 'Ｍａｔｒｉｘ']) expect(normalizeTitle(t)).toBe('matrix');
    expect(normalizeTitle('A')).toBe('a');
    expect(normalizeTitle("Schindler's List")).toBe('schindler s list');
  });

  it('rankGrpo collapses whitespace and folds case only; none keeps the raw string', () => {
    expect(normalizeTitle('  The   Matrix ', 'rankGrpo')).toBe('the matrix');
    expect(normalizeTitle(' X ', 'none')).toBe(' X ');
  });
});

// yaochenzhu/Rank-GRPO@0808d82 libs/metrics_align.py L5-9: _safe_int_year(y) = int(str(y)), None when int() raises;
// applied to ground-truth years (L46-52) and recommended years (L63-65). Expected values are Python's int(str(y)).
describe('upstreamYear (rankGrpo mode: int(str(y)))', () => {
  it('parses a string as Python int() does and drops what int() rejects', () => {
    const parsed: [unknown, number | null][] = [
      ['1999', 1999], [' 1999\n', 1999], ['+1999', 1999], ['-12', -12], ['0099', 99], ['1_999', 1999],
      ['\u0661\u0669\u0669\u0669', 1999], ['\uff11\uff19\uff19\uff19', 1999], ['\u{1d7d9}\u{1d7e1}', 19], // Arabic-Indic, fullwidth, math double-struck
      ['1999.0', null], ['n/a', null], ['', null], ['19 99', null], ['1__999', null], ['_1999', null], ['1999_', null],
      [1999, 1999], [1999.5, null], [NaN, null], [true, null], [null, null], [undefined, null], [2000n, 2000],
    ];
    for (const [value, expected] of parsed) expect(upstreamYear(value), String(value)).toBe(expected);
  });

  // libs/utils.py L62 and L75: pattern (.+?)\s+\((\d{4})\) (Python's \d is any Unicode digit), year = int(match.group(2)).
  it('reads Unicode-digit years in list lines as process_rec_raw does', () => {
    expect(pairs(parseItems('1. Heat (\u0661\u0669\u0669\u0665)\n2. Alien (1979)', 'rankGrpo').items)).toEqual([['Heat', 1995], ['Alien', 1979]]);
  });
});

describe('matcher (TV23, rankGrpo mode)', () => {
  const upstream: MatchRules = { mode: 'rankGrpo', normalization: 'rankGrpo', yearTolerance: 2 };
  const tv9Catalog: TitleYear[] = [
    { title: 'Inception', year: 2010 },
    { title: 'Heat', year: 1995 },
    { title: 'Alien', year: 1979 },
    { title: 'The Matrix', year: 1999 },
    { title: 'Y', year: 2000 },
  ];
  const tv23Catalog = [...tv9Catalog, { title: 'The Matrix', year: 2001 }, { title: 'X', year: 2001 }];
  const asItems = (recs: [string, number][]): ParsedItem[] =>
    recs.map(([title, year], line) => ({ title, year, span: [0, 0], line }));

  function hits(recs: [string, number][], gt: [string, number][], seen: SeenEntry[] = [], options: Partial<MatchRules> & { catalog?: TitleYear[] } = {}) {
    const rules = { ...upstream, ...options };
    const items = asItems(recs);
    const context = checkContext(rules, seen, Catalog.fromEntries(options.catalog ?? tv23Catalog));
    const truth = groundTruth(gt.map(([title, year]) => ({ title, year })), rules, false);
    const titles = itemTitles(items, rules);
    const row = [...matchHits(items, titles.truth, checkItems(items, titles.check, context), truth, rules.yearTolerance)];
    return [...row, ...Array(5 - row.length).fill(0)];
  }

  it('TV23: year tolerance, catalog on the recommended year', () => {
    expect(hits([['The Matrix', 2001]], [['The Matrix', 1999]])).toEqual([1, 0, 0, 0, 0]);
    expect(hits([['The Matrix', 2001]], [['The Matrix', 1999]], [], { yearTolerance: 1 })).toEqual([0, 0, 0, 0, 0]);
    expect(hits([['The Matrix', 2001]], [['The Matrix', 1999]], [], { catalog: tv9Catalog })).toEqual([0, 0, 0, 0, 0]);
  });

  it('TV23: ground-truth units are consumed, +1 before -1', () => {
    const x: [string, number] = ['X', 2001];
    expect(hits([x, x, x], [['X', 2000], ['X', 2002]])).toEqual([1, 1, 0, 0, 0]);
    expect(hits([['Heat', 1995], ['Heat', 1995]], [['Heat', 1995]])).toEqual([1, 0, 0, 0, 0]);
    expect(hits([['Heat', 1995], ['Heat', 1995]], [['Heat', 1995], ['Heat', 1995]])).toEqual([1, 1, 0, 0, 0]);
  });

  it('TV23: seen and catalog checks are raw, ground truth is normalised, bad GT years dropped', () => {
    const both: [string, number][] = [['Heat', 1995], ['Inception', 2010]];
    expect(hits(both, both, ['Heat'])).toEqual([0, 1, 0, 0, 0]);
    expect(hits([['Heat', 1995]], [['Heat', 1995]], ['heat'])).toEqual([1, 0, 0, 0, 0]);
    expect(hits([['The Matrix', 1999]], [['the   MATRIX', 1999]])).toEqual([1, 0, 0, 0, 0]);
    expect(hits([['the matrix', 1999]], [['The Matrix', 1999]])).toEqual([0, 0, 0, 0, 0]);
    expect(hits([['Heat', 1995]], [['Heat', Number('n/a')]])).toEqual([0, 0, 0, 0, 0]);
  });

  it('ground-truth years given as strings parse as int(str(y)); non-numeric ones are dropped', () => {
    const asStrings = (gt: [string, string][]) => gt as unknown as [string, number][];
    expect(hits([['The Matrix', 1999]], asStrings([['The Matrix', '1999']]))).toEqual([1, 0, 0, 0, 0]);
    expect(hits([['The Matrix', 2001]], asStrings([['The Matrix', ' 1999 ']]))).toEqual([1, 0, 0, 0, 0]); // ±2 from 1999
    expect(hits([['Heat', 1995], ['Alien', 1979]], asStrings([['Heat', 'n/a'], ['Alien', '1979']]))).toEqual([0, 1, 0, 0, 0]);
    expect(hits([['Heat', 1995]], asStrings([['Heat', '1995.0']]))).toEqual([0, 0, 0, 0, 0]);
  });

  it('default mode: normalised checks, duplicates and seen-with-year reasons', () => {
    const rules: MatchRules = { mode: 'default', normalization: 'default', yearTolerance: 2 };
    const items = asItems([['the matrix', 1999], ['Matrix, The', 1999], ['Heat', 1995], ['Heat', 2020], ['Nope', 2000]]);
    items.push({ title: 'Inception', year: null, span: [0, 0], line: 5 });
    const context = checkContext(rules, [{ title: 'HEAT', year: 1996 }], Catalog.fromEntries([...tv9Catalog, { title: 'Heat', year: 2020 }]));
    expect(checkItems(items, itemTitles(items, rules).check, context)).toEqual([null, 'duplicate', 'seen', null, 'notInCatalog', 'format']);
  });
});
