// Each preset reproduces its upstream numbers (TV1–TV17) and is a frozen object to spread.
import { describe, expect, it } from 'vitest';
import { groupAdvantagesSync, rankAdvantagesSync } from '../lib/kernels/advantage.js';
import { policyLossSync, type PolicyLossInput } from '../lib/kernels/loss.js';
import { presets } from '../lib/kernels/presets.js';
import { F, TV1, TV1_REWARDS, TV3, TV4, TV5, TV8, TV12, TV14, TV15, TV17 } from './fixtures/grpo-vectors.js';
import { expectClose } from './helpers/close.js';

const close = (actual: number, expected: number) => expectClose([actual], [expected]);
const fixtureF: PolicyLossInput = {
  shape: [2, 4], logp: Float32Array.from(F.logp), oldLogp: Float32Array.from(F.old),
  advantages: Float32Array.from(F.advantages), mask: Uint8Array.from(F.mask),
};
const rewards = Float32Array.from(TV1_REWARDS);

describe('presets', () => {
  it('trl: TV1 advantages and TV14 dapo loss', () => {
    expectClose(groupAdvantagesSync(rewards, { ...presets.trl.advantages, groupSize: 4 }).advantages, TV1.advantages);
    close(policyLossSync(fixtureF, { ...presets.trl.loss, tokenCount: 5 }).loss, TV14.dapo);
  });

  it('trl021: TV14 bnpo loss', () => {
    close(policyLossSync(fixtureF, presets.trl021.loss).loss, TV14.bnpo);
  });

  it('verl: TV4 and TV5 advantages, TV15 token-mean loss', () => {
    expectClose(groupAdvantagesSync(rewards, { ...presets.verl.advantages, groupIds: Int32Array.from(TV4.groupIds) }).advantages, TV4.advantages);
    expectClose(groupAdvantagesSync(Float32Array.from(TV5.rewards), { ...presets.verl.advantages, groupIds: Int32Array.from(TV5.groupIds) }).advantages, TV5.verlNorm);
    close(policyLossSync(fixtureF, { ...presets.verl.loss, beta: 0 }).loss, TV15.tokenMean);
  });

  it('drGrpoTrl and drGrpoVerl: TV3 advantages, losses that differ by the factor B', () => {
    expectClose(groupAdvantagesSync(rewards, { ...presets.drGrpoTrl.advantages, groupSize: 4 }).advantages, TV3.advantages);
    expectClose(groupAdvantagesSync(Float32Array.from(TV5.rewards), { ...presets.drGrpoVerl.advantages, groupIds: Int32Array.from(TV5.groupIds) }).advantages, TV5.verlNoNorm);
    close(policyLossSync(fixtureF, { ...presets.drGrpoTrl.loss, maxCompletionLength: 4 }).loss, TV14.drGrpo4);
    close(policyLossSync(fixtureF, presets.drGrpoVerl.loss).loss, TV15.seqMeanTokenSumNorm);
  });

  it('gspoTrl and gspoVerl: TV17', () => {
    close(policyLossSync(fixtureF, presets.gspoTrl.loss).loss, TV17.loss);
    close(policyLossSync(fixtureF, { ...presets.gspoVerl.loss, beta: 0 }).loss, TV17.loss);
  });

  it('rankGrpo and remark: TV8 rank-wise advantages and the TV12 item-level loss with KL', () => {
    for (const p of [presets.rankGrpo, presets.remark]) {
      expectClose(rankAdvantagesSync(Float32Array.from(TV8.rewards), { ...p.advantages, candidates: 4, ranks: 3 }).advantages, TV8.advantages);
      const input: PolicyLossInput = {
        shape: [1, 6], logp: Float32Array.from(TV12.logRatio, (d) => -1 + d), oldLogp: new Float32Array(6).fill(-1),
        refLogp: Float32Array.from(TV12.refMinusOld, (x) => -1 + x), advantages: Float32Array.from(TV12.advantages),
        mask: new Uint8Array(6).fill(1), segments: Int32Array.from(TV12.segments),
      };
      close(policyLossSync(input, { ...p.loss, numItems: 3 }).loss, TV12.itemBnpoKl);
      expect(p.tokenAdvantages?.lengthShaping?.enabled).toBe(true);
    }
  });

  it('presets are frozen, say what they reproduce, and can be spread and overridden', () => {
    for (const [name, p] of Object.entries(presets)) {
      expect(Object.isFrozen(p), name).toBe(true);
      expect(Object.isFrozen(p.loss), name).toBe(true);
      expect(p.reproduces.length, name).toBeGreaterThan(10);
    }
    expect(() => { (presets.trl.loss as { beta: number }).beta = 1; }).toThrow(TypeError);
    const overridden = { ...presets.verl.loss, beta: 0, dualClipC: 10 };
    close(policyLossSync(fixtureF, overridden).loss, TV15.tokenMeanC10);
  });
});
