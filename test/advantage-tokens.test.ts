// Advantages on tokens: Rank-GRPO's item scatter with length shaping (TV10) and the sequence
// broadcast with its truncation policies (peer-landscape §C.3).
import { describe, expect, it } from 'vitest';
import { groupAdvantagesSync } from '../lib/kernels/advantage.js';
import { tokenAdvantages, tokenAdvantagesSync } from '../lib/kernels/token-advantages.js';
import { itemTokenRowReference } from '../lib/reference/advantage.js';
import { TV8, TV10 } from './fixtures/grpo-vectors.js';
import { expectClose } from './helpers/close.js';
import { codeOf } from './helpers/errors.js';
import { randomInts, randomNormal } from './helpers/random.js';

const flat = (rows: readonly (readonly number[])[]) => rows.flat();

/** TV10 inputs: mask = non-pad tokens, EOS = the first eos id, advantages from TV8. */
function tv10Input() {
  const mask = Uint8Array.from(flat(TV10.ids).map((id) => (id === TV10.padId ? 0 : 1)));
  const eosPositions = Int32Array.from(TV10.ids, (row) => row.indexOf(TV10.eosId));
  return { advantages: Float32Array.from(TV8.advantages), mask, segments: Int32Array.from(flat(TV10.segments)), eosPositions };
}

describe('Rank-GRPO token advantages', () => {
  it('TV10: item scatter with length shaping', () => {
    const { advantages, lossMask } = tokenAdvantagesSync(tv10Input(), { ranks: 3 });
    expectClose(advantages, flat(TV10.shaped));
    expect(lossMask).toEqual(tv10Input().mask);
  });

  it('TV10: with shaping off the EOS and overflow entries are 0', async () => {
    const { advantages } = await tokenAdvantages(tv10Input(), { ranks: 3, lengthShaping: { enabled: false } });
    const expected = flat(TV10.shaped).map((a, i) => (Math.abs(Math.abs(a) - 0.1) < 1e-9 ? 0 : a));
    expectClose(advantages, expected);
  });

  it('TV11: a "\\n\\n" token skips a segment id, so the last item becomes overflow', () => {
    // ids [1,10,2,9,3,0] with 10 = "\n\n": seg [0,0,2,2,3,3], K = 3, EOS at 5
    const input = {
      advantages: Float32Array.of(1, 2, 3), mask: new Uint8Array(6).fill(1),
      segments: Int32Array.of(0, 0, 2, 2, 3, 3), eosPositions: Int32Array.of(5),
    };
    expectClose(tokenAdvantagesSync(input).advantages, [1, 1, 3, 3, -0.1, -0.1]);
  });

  it('matches the float64 reference on random segments', () => {
    const rows = 16;
    const cols = 40;
    const ranks = 5;
    const segments = Int32Array.from(randomInts(rows * cols, ranks + 3, 7), (s) => s - 1);
    const mask = Uint8Array.from(randomInts(rows * cols, 4, 8), (x) => (x > 0 ? 1 : 0));
    const eosPositions = Int32Array.from(randomInts(rows, cols + 1, 9), (e) => e - 1);
    const advantages = randomNormal(rows * ranks, 1, 10);
    const out = tokenAdvantagesSync({ advantages, mask, segments, eosPositions }, { ranks }).advantages;
    const shaping = { enabled: true, endOfList: 0.1, extraToken: -0.1, earlyStop: -0.1 };
    for (let b = 0; b < rows; b++) {
      const row = (x: ArrayLike<number>, w: number) => Array.from(x).slice(b * w, (b + 1) * w);
      const expected = itemTokenRowReference(row(advantages, ranks), row(segments, cols), row(mask, cols), eosPositions[b], ranks, shaping);
      expectClose(out.subarray(b * cols, (b + 1) * cols), expected);
    }
  });
});

describe('sequence advantages on tokens and truncation (peer-landscape §C.3)', () => {
  // Group of 4; row 3 is truncated (no EOS) but its reward (1) still enters the group statistics.
  const rewards = Float32Array.of(1, 0, 0, 1);
  const mask = Uint8Array.from([1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
  const truncated = Uint8Array.of(0, 0, 0, 1);
  const sequence = groupAdvantagesSync(rewards, { groupSize: 4 }).advantages;

  it('keep: every masked token carries its sequence advantage', () => {
    const { advantages, lossMask } = tokenAdvantagesSync({ advantages: sequence, mask, truncated });
    expect(lossMask).toEqual(mask);
    expectClose(advantages, Array.from(mask, (m, i) => m * sequence[Math.floor(i / 4)]));
  });

  it('dropTruncated: the truncated row leaves the loss but kept its place in the group statistics', () => {
    const { advantages, lossMask } = tokenAdvantagesSync({ advantages: sequence, mask, truncated }, { truncation: 'dropTruncated' });
    expect(Array.from(lossMask.subarray(12))).toEqual([0, 0, 0, 0]);
    expect(Array.from(advantages.subarray(12))).toEqual([0, 0, 0, 0]);
    // The other rows keep the advantages computed with the truncated row's reward in the group.
    expectClose(advantages.subarray(0, 3), [sequence[0], sequence[0], sequence[0]]);
    expect(sequence[0]).toBeCloseTo(0.8658754, 6);
  });

  it('dropSuffix: only the unfinished suffix after prefixEnd leaves the loss (CCR rule)', () => {
    const prefixEnd = Int32Array.of(0, 0, 0, 2);
    const { advantages, lossMask } = tokenAdvantagesSync({ advantages: sequence, mask, truncated, prefixEnd }, { truncation: 'dropSuffix' });
    expect(Array.from(lossMask)).toEqual([1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0]);
    expectClose(advantages.subarray(12), [sequence[3], sequence[3], 0, 0]);
  });

  it('gives typed errors for bad input', () => {
    expect(codeOf(() => tokenAdvantagesSync({ advantages: sequence, mask: mask.subarray(1) }))).toBe('GRPO_SHAPE_MISMATCH');
    expect(codeOf(() => tokenAdvantagesSync({ advantages: sequence, mask }, { truncation: 'dropTruncated' }))).toBe('GRPO_INVALID_ARGUMENT');
    expect(codeOf(() => tokenAdvantagesSync({ advantages: sequence, mask, truncated }, { truncation: 'dropSuffix' }))).toBe('GRPO_INVALID_ARGUMENT');
    const item = tv10Input();
    expect(codeOf(() => tokenAdvantagesSync({ ...item, segments: Int32Array.from(item.segments, (s) => (s === 2 ? -5 : s)) }))).toBe('GRPO_INDEX_RANGE');
    expect(codeOf(() => tokenAdvantagesSync({ ...item, eosPositions: Int32Array.of(9, 0, 0, 0) }))).toBe('GRPO_INDEX_RANGE');
    expect(codeOf(() => tokenAdvantagesSync({ ...item, advantages: Float32Array.of(NaN, ...TV8.advantages.slice(1)) }))).toBe('GRPO_NON_FINITE');
    expect(codeOf(() => tokenAdvantagesSync({ ...item, mask: new Float32Array(32) as unknown as Uint8Array }))).toBe('GRPO_INVALID_ARGUMENT');
  });
});
