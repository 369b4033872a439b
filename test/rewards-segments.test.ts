import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseItems } from '../lib/rewards/items.js';
import { checkNewlineAlignment, itemSegments, newlineSegments, piecesToOffsets } from '../lib/rewards/segments.js';

describe('newlineSegments (upstream segmenter)', () => {
  it('TV11: a "\\n\\n" token skips a segment id and pushes the last item into overflow', () => {
    const pieces = ['A', '\n\n', 'B', '\n', 'C', ''];
    const { segments, overflow, itemsEmitted } = newlineSegments(pieces, 3);
    expect([...segments]).toEqual([0, 0, 2, 2, 3, 3]);
    expect([...overflow]).toEqual([0, 0, 0, 0, 1, 1]);
    expect(itemsEmitted).toBe(4);
  });

  it('counts merged newline tokens such as ")\\n" and "\\r\\n"', () => {
    expect([...newlineSegments(['A', ')\n', 'B', '\r\n', 'C'], 3).segments]).toEqual([0, 0, 1, 1, 2]);
  });
});

describe('itemSegments', () => {
  it('TV11: maps by character span, so the blank line shifts nothing, and reports the upstream shift', () => {
    const pieces = ['A', '\n\n', 'B', '\n', 'C', ''];
    const items = [{ span: [0, 1] as const }, { span: [3, 4] as const }, { span: [5, 6] as const }];
    const ours = itemSegments(items, piecesToOffsets(pieces), 3);
    expect([...ours.segments]).toEqual([0, -1, 1, -1, 2, -1]);
    expect(ours.aligned).toBe(true);
    const report = checkNewlineAlignment(items, pieces, 3);
    expect(report.aligned).toBe(false);
    expect(report.shifted).toEqual([
      { rank: 1, newlineSegment: 2 },
      { rank: 2, newlineSegment: 3 },
    ]);
    expect([report.itemsEmitted, report.itemsParsed]).toEqual([4, 3]);
  });

  it('segments a parsed completion with a preamble: tokens of each line get its rank, items ≥ K overflow', () => {
    const text = 'Here:\n1. Heat (1995)\n2. Up (2009)\n3. Alien (1979)';
    const pieces = text.match(/.{1,4}|\n/gu) ?? [];
    const { items } = parseItems(text);
    const { segments, overflow, aligned } = itemSegments(items, piecesToOffsets(pieces), 2);
    const offsets = piecesToOffsets(pieces);
    segments.forEach((rank, t) => {
      const start = offsets[2 * t];
      const line = text.slice(0, start).split('\n').length - 1;
      const lineRank = pieces[t] === '\n' || line === 0 ? -1 : line - 1;
      expect(rank).toBe(lineRank < 2 ? lineRank : -1);
      expect(overflow[t]).toBe(lineRank >= 2 ? 1 : 0);
    });
    expect(aligned).toBe(true);
  });

  it('reports straddling tokens and items that no token covers instead of shifting ranks', () => {
    const items = [{ span: [0, 3] as const }, { span: [4, 7] as const }, { span: [8, 11] as const }];
    const straddle = itemSegments(items, [[0, 5], [5, 7]], 3);
    expect([...straddle.segments]).toEqual([0, 1]);
    expect(straddle.straddlingTokens).toEqual([0]);
    expect(straddle.itemsWithoutTokens).toEqual([2]);
    expect(straddle.aligned).toBe(false);
  });

  it('ignores zero-width special tokens and rejects odd-length offsets', () => {
    expect([...itemSegments([{ span: [0, 2] }], Int32Array.of(0, 2, 0, 0), 1).segments]).toEqual([0, -1]);
    expect(() => itemSegments([], Int32Array.of(0, 1, 2), 1)).toThrow(/tokenOffsets of shape \[tokens, 2\]/);
  });

  it('property: with any split of the text into tokens, every item below K gets exactly its own tokens', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('1. Heat (1995)', 'Up (2009)', 'so', '', '- X (2000)'), { maxLength: 8 }), fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1 }), (lines, cuts) => {
        const text = lines.join('\n');
        const pieces: string[] = [];
        for (let i = 0, c = 0; i < text.length; c++) {
          pieces.push(text.slice(i, i + cuts[c % cuts.length]));
          i += cuts[c % cuts.length];
        }
        const { items } = parseItems(text);
        const { segments } = itemSegments(items, piecesToOffsets(pieces), 20);
        const offsets = piecesToOffsets(pieces);
        segments.forEach((rank, t) => {
          const [start, end] = [offsets[2 * t], offsets[2 * t + 1]];
          const inside = items.findIndex((item) => start < item.span[1] && item.span[0] < end);
          expect(rank).toBe(inside);
        });
      }),
      { seed: 3, numRuns: 300 },
    );
  });
});
