import { GrpoError } from '../errors.js';
import { integer } from '../validate.js';

/**
 * Token character offsets: `Int32Array` [tokens, 2] of `[start, end)` pairs, or an array of pairs (what
 * `@huggingface/tokenizers` returns). Offsets are UTF-16 indices into the same string the items were
 * parsed from; zero-width tokens (special tokens such as EOS, often `[0, 0]`) belong to no item.
 */
export type TokenOffsets = Int32Array | ReadonlyArray<readonly [number, number]>;

/** Anything with a `[start, end)` span, such as a parsed item. */
export interface Spanned {
  span: readonly [number, number];
}

/** Token segments of one completion, and whether they agree with the parsed items. */
export interface ItemSegments {
  /** segments [tokens]: the rank (0..K−1) of the item a token belongs to, or −1 */
  segments: Int32Array;
  /** overflow [tokens]: 1 for tokens of items ranked K or later */
  overflow: Uint8Array;
  /** ranks < K whose span no token overlaps (offsets that do not cover the text) */
  itemsWithoutTokens: number[];
  /** tokens that overlap two or more items (assigned to the first; a merged "…)\n2." token) */
  straddlingTokens: number[];
  /** true when every item below K has tokens and no token straddles items */
  aligned: boolean;
}

function offsetPair(offsets: TokenOffsets, t: number): [number, number] {
  return offsets instanceof Int32Array ? [offsets[2 * t], offsets[2 * t + 1]] : [offsets[t][0], offsets[t][1]];
}

function tokenCount(offsets: TokenOffsets): number {
  if (offsets instanceof Int32Array) {
    if (offsets.length % 2 !== 0) {
      throw new GrpoError('GRPO_SHAPE_MISMATCH', `Expected tokenOffsets of shape [tokens, 2] but received Int32Array(${offsets.length})`);
    }
    return offsets.length / 2;
  }
  if (!Array.isArray(offsets)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected Int32Array or an array of [start, end] pairs for tokenOffsets but received ${typeof offsets}`);
  }
  return offsets.length;
}

/** First item whose span ends after `position` (spans are sorted and disjoint). */
function firstEndingAfter(items: readonly Spanned[], position: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid].span[1] <= position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Maps parsed items to token segment ids for the rank-wise advantage scatter: token t gets the rank of
 * the first item whose span `[start, end)` its offsets overlap, −1 for tokens outside every item
 * (preambles, blank lines, the newlines between items, special tokens) and for items ranked K or later
 * (flagged in `overflow`). Because the mapping goes through character spans, a blank line or a skipped
 * line never shifts ranks (upstream's newline counter does, TV11); problems are reported, not hidden.
 */
export function itemSegments(items: readonly Spanned[], tokenOffsets: TokenOffsets, k: number): ItemSegments {
  integer('k', k, 1);
  const tokens = tokenCount(tokenOffsets);
  // segments [tokens], overflow [tokens]
  const segments = new Int32Array(tokens).fill(-1);
  const overflow = new Uint8Array(tokens);
  const covered = new Uint8Array(Math.min(items.length, k));
  const straddlingTokens: number[] = [];
  for (let t = 0; t < tokens; t++) {
    const [start, end] = offsetPair(tokenOffsets, t);
    if (!(end > start)) continue;
    const first = firstEndingAfter(items, start);
    if (first >= items.length || items[first].span[0] >= end) continue;
    if (first + 1 < items.length && items[first + 1].span[0] < end) straddlingTokens.push(t);
    if (first < k) {
      segments[t] = first;
      covered[first] = 1;
    } else overflow[t] = 1;
  }
  const itemsWithoutTokens = [...covered.keys()].filter((r) => covered[r] === 0);
  const aligned = itemsWithoutTokens.length === 0 && straddlingTokens.length === 0;
  return { segments, overflow, itemsWithoutTokens, straddlingTokens, aligned };
}

/** Index of the first token that starts at or after character `position` (the token count when none does). */
export function firstTokenFrom(tokenOffsets: TokenOffsets, position: number): number {
  const tokens = tokenCount(tokenOffsets);
  for (let t = 0; t < tokens; t++) if (offsetPair(tokenOffsets, t)[0] >= position) return t;
  return tokens;
}

/** Upstream newline segmentation of one completion (Rank-GRPO `_segment_items_from_tokens`). */
export interface NewlineSegments {
  /** segments [tokens]: item counter before the token (may be ≥ K) */
  segments: Int32Array;
  /** overflow [tokens]: 1 where the segment is ≥ K */
  overflow: Uint8Array;
  /** max segment + 1 */
  itemsEmitted: number;
}

/**
 * Upstream segmenter, for comparison and parity: `seg[t]` = number of "\n" in the pieces before token t
 * (a "\n\n" token counts two, "\r\n" one), so the newline token belongs to the preceding item.
 * `pieces` are the decoded strings of the valid tokens (`decode([id])`; EOS decodes to "").
 */
export function newlineSegments(pieces: readonly string[], k: number): NewlineSegments {
  integer('k', k, 1);
  // segments [tokens], overflow [tokens]
  const segments = new Int32Array(pieces.length);
  const overflow = new Uint8Array(pieces.length);
  let item = 0;
  for (let t = 0; t < pieces.length; t++) {
    segments[t] = item;
    overflow[t] = item >= k ? 1 : 0;
    item += pieces[t].replaceAll('\r\n', '\n').split('\n').length - 1;
  }
  const itemsEmitted = pieces.length === 0 ? 0 : segments[pieces.length - 1] + 1;
  return { segments, overflow, itemsEmitted };
}

/** Character offsets [tokens, 2] of decoded pieces laid end to end (their concatenation is the text). */
export function piecesToOffsets(pieces: readonly string[]): Int32Array {
  const offsets = new Int32Array(2 * pieces.length);
  let position = 0;
  pieces.forEach((piece, t) => {
    offsets[2 * t] = position;
    position += piece.length;
    offsets[2 * t + 1] = position;
  });
  return offsets;
}

/** Where the upstream newline segmenter disagrees with the parsed items (TV11). */
export interface AlignmentReport {
  /** true when parsed rank r lands in newline segment r for every item below K */
  aligned: boolean;
  /** parsed items below K whose newline segment differs from their rank */
  shifted: Array<{ rank: number; newlineSegment: number }>;
  /** newline segments emitted vs items parsed */
  itemsEmitted: number;
  itemsParsed: number;
}

/**
 * Checks whether upstream's position alignment (reward column k ↔ k-th newline chunk) holds for this
 * completion: for each parsed item below K, the newline segment of its first token must equal its rank.
 */
export function checkNewlineAlignment(items: readonly Spanned[], pieces: readonly string[], k: number): AlignmentReport {
  const upstream = newlineSegments(pieces, k);
  const ours = itemSegments(items, piecesToOffsets(pieces), k);
  const shifted: AlignmentReport['shifted'] = [];
  const firstToken = new Map<number, number>();
  ours.segments.forEach((rank, t) => {
    if (rank >= 0 && !firstToken.has(rank)) firstToken.set(rank, t);
  });
  for (const [rank, t] of firstToken) {
    if (upstream.segments[t] !== rank) shifted.push({ rank, newlineSegment: upstream.segments[t] });
  }
  return { aligned: shifted.length === 0 && ours.aligned, shifted, itemsEmitted: upstream.itemsEmitted, itemsParsed: items.length };
}
