// Caller-owned output buffers (issue 17): `out` for policyLoss (gradLogp [B, T]) and groupAdvantages
// (advantages [B]). A reused buffer pre-filled with garbage gives bit for bit the allocating call's result, at
// every thread count, sync and async; a wrong dtype, length or an out sharing an input's memory is a typed error.
import { afterAll, describe, expect, it } from 'vitest';
import { GrpoError } from '../lib/errors.js';
import { groupAdvantages, groupAdvantagesSync, type GroupAdvantageCallOptions } from '../lib/kernels/advantage.js';
import { policyLoss, policyLossSync, type PolicyLossCallOptions, type PolicyLossInput } from '../lib/kernels/loss.js';
import { getThreads, setThreads } from '../lib/runtime.js';
import { mulberry32 } from '../lib/data/rng.js';

const bits = (x: Float32Array) => Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));
const garbage = (n: number) => new Float32Array(n).fill(NaN);

function lossInput(rows: number, cols: number, perRow = false): PolicyLossInput {
  const random = mulberry32(3), n = rows * cols;
  const logp = Float32Array.from({ length: n }, () => -3 * random());
  const mask = new Uint8Array(n);
  for (let b = 0; b < rows; b++) mask.fill(1, b * cols, b * cols + 1 + Math.floor((cols - 1) * random()));
  return {
    shape: [rows, cols], logp, mask,
    oldLogp: Float32Array.from(logp, (x) => x + 0.3 * (random() - 0.5)),
    refLogp: Float32Array.from(logp, (x) => x + 0.3 * (random() - 0.5)),
    advantages: Float32Array.from({ length: perRow ? rows : n }, () => 2 * random() - 1),
    segments: Int32Array.from({ length: n }, (_, i) => Math.floor((i % cols) / 8)),
  };
}

const LOSS_CASES: [string, PolicyLossCallOptions, boolean][] = [
  ['token clip + k3 KL', { beta: 0.04, aggregation: 'localTokenMean' }, false],
  ['sequence level, [B] advantages', { isLevel: 'sequence', aggregation: 'seqMeanTokenMean' }, true],
  ['item level', { isLevel: 'item' }, false],
  ['geoMean', { lossType: 'geoMean' }, false],
  ['vespo', { lossType: 'vespo' }, true],
];

const threads = getThreads();
afterAll(() => setThreads(threads));

describe('policyLoss out', () => {
  for (const [name, options, perRow] of LOSS_CASES) {
    it(`${name}: a garbage-filled out reused across calls and thread counts equals the allocating call bit for bit`, async () => {
      const input = lossInput(37, 96, perRow);
      setThreads(1);
      const fresh = policyLossSync(input, options);
      const out = garbage(37 * 96);
      for (const t of [1, 2, 3]) {
        setThreads(t);
        out.fill(NaN);
        const reused = policyLossSync(input, { ...options, out });
        expect(reused.gradLogp).toBe(out);
        expect(bits(out)).toEqual(bits(fresh.gradLogp));
        expect(reused.loss).toBe(fresh.loss);
        expect(reused.stats).toEqual(fresh.stats);
        out.fill(NaN);
        const later = await policyLoss(input, { ...options, out });
        expect(later.gradLogp).toBe(out);
        expect(bits(out)).toEqual(bits(fresh.gradLogp));
      }
    });
  }

  it('an async call writes out only when it settles', async () => {
    const out = garbage(37 * 96);
    const pending = policyLoss(lossInput(37, 96), { out });
    expect(Number.isNaN(out[0])).toBe(true);
    await pending;
    expect(Number.isNaN(out[0])).toBe(false);
  });

  it('an out transferred mid-call rejects with GRPO_DETACHED_BUFFER', async () => {
    const out = garbage(37 * 96);
    const pending = policyLoss(lossInput(37, 96), { out });
    structuredClone(out.buffer, { transfer: [out.buffer] });
    await expect(pending).rejects.toMatchObject({ code: 'GRPO_DETACHED_BUFFER' });
  });

  it('a wrong dtype, length or aliasing out is a typed error naming it', () => {
    const input = lossInput(4, 8);
    const error = (out: unknown) => { try { policyLossSync(input, { out } as PolicyLossCallOptions); } catch (e) { return e as GrpoError; } return null; };
    expect([error(new Float64Array(32))?.code, error(new Float64Array(32))?.message])
      .toEqual(['GRPO_INVALID_ARGUMENT', 'Expected Float32Array for policyLoss out but received Float64Array(32)']);
    expect([error(new Float32Array(31))?.code, error(new Float32Array(31))?.message])
      .toEqual(['GRPO_SHAPE_MISMATCH', 'Expected policyLoss out of shape [B, T] = [4, 8] = 32 elements but received 31']);
    expect(error(input.logp)?.message).toBe('Expected policyLoss out to share no memory with the input logp');
    const shared = new Float32Array(64);
    const aliased = { ...input, oldLogp: shared.subarray(16, 48) };
    expect(() => policyLossSync(aliased, { out: shared.subarray(0, 32) })).toThrow('Expected policyLoss out to share no memory with the input oldLogp');
    expect(() => policyLossSync({ ...input, oldLogp: shared.subarray(32, 64) }, { out: shared.subarray(0, 32) })).not.toThrow();
  });

  it('an async call rejects (never throws) on a bad out', async () => {
    await expect(policyLoss(lossInput(4, 8), { out: new Float32Array(3) })).rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH' });
  });
});

function rewards(n: number, objectives = 1): Float32Array {
  const random = mulberry32(5);
  return Float32Array.from({ length: n * objectives }, (_, i) => (i % 29 === 3 ? NaN : Math.round(4 * random()) / 4));
}

const GROUP_CASES: [string, GroupAdvantageCallOptions, number][] = [
  ['contiguous groups', { groupSize: 16 }, 1],
  ['batch scale, weighted', { groupSize: 8, scale: 'batch', rewardWeights: [0.5] }, 1],
  ['groupIds', { groupIds: Int32Array.from({ length: 4096 }, (_, i) => (i * 7) % 50) }, 1],
  ['sumThenNormalize, R 3', { groupSize: 16, objectives: 3 }, 3],
  ['normalizeThenSum, R 2', { groupSize: 16, objectives: 2, multiObjective: 'normalizeThenSum' }, 2],
];

describe('groupAdvantages out', () => {
  for (const [name, options, objectives] of GROUP_CASES) {
    it(`${name}: a garbage-filled out equals the allocating call bit for bit, sync and async, at any thread count`, async () => {
      const r = rewards(4096, objectives);
      setThreads(1);
      const fresh = groupAdvantagesSync(r, options);
      const out = garbage(4096);
      for (const t of [1, 3]) {
        setThreads(t);
        out.fill(NaN);
        const reused = groupAdvantagesSync(r, { ...options, out });
        expect(reused.advantages).toBe(out);
        expect(bits(out)).toEqual(bits(fresh.advantages));
        expect(reused.stats).toEqual(fresh.stats);
        out.fill(NaN);
        expect((await groupAdvantages(r, { ...options, out })).advantages).toBe(out);
        expect(bits(out)).toEqual(bits(fresh.advantages));
      }
    });
  }

  it('a wrong dtype, length or aliasing out is a typed error naming it', async () => {
    const r = rewards(64);
    expect(() => groupAdvantagesSync(r, { groupSize: 16, out: new Float64Array(64) as unknown as Float32Array }))
      .toThrow('Expected Float32Array for groupAdvantages out but received Float64Array(64)');
    expect(() => groupAdvantagesSync(r, { groupSize: 16, out: new Float32Array(63) }))
      .toThrow(expect.objectContaining({ code: 'GRPO_SHAPE_MISMATCH', message: 'Expected groupAdvantages out of shape [B] = [64] = 64 elements but received 63' }));
    expect(() => groupAdvantagesSync(rewards(64, 2), { groupSize: 16, objectives: 2, out: new Float32Array(128) })).toThrow('[B] = [64]');
    expect(() => groupAdvantagesSync(r, { groupSize: 16, out: r })).toThrow('Expected groupAdvantages out to share no memory with the input rewards');
    await expect(groupAdvantages(r, { groupSize: 16, out: r.subarray(1) })).rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH' });
  });
});
