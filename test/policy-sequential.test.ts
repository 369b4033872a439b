// The sequential training form of the Policy interface: forward → (the trainer's loss) → backward → optimizerStep,
// the same update as step(); stale forward handles, frozen copies and dispose are typed errors.
import { describe, expect, it } from 'vitest';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import type { ModelConfig } from '../lib/policy/config.js';
import { policyStep, sftLoss, type LossFunction, type Policy } from '../lib/policy/policy.js';
import { expectClose } from './helpers/close.js';
import { randomInts } from './helpers/random.js';

const tiny: ModelConfig = {
  vocabSize: 37, hiddenSize: 32, intermediateSize: 48, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 8,
  maxPositions: 64, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: true, architecture: 'Qwen2ForCausalLM',
};

const batch = {
  prompts: [randomInts(5, 37, 1), randomInts(9, 37, 2), randomInts(2, 37, 3)],
  completions: [randomInts(6, 37, 4), randomInts(3, 37, 5), randomInts(8, 37, 6)],
};
const half = (rows: number[]) => ({ prompts: rows.map((r) => batch.prompts[r]), completions: rows.map((r) => batch.completions[r]) });

/** −Σ logp / N over the batch's N completion tokens, un-normalised per call (so gradients of parts add to the whole's). */
const tokenCount = batch.completions.reduce((n, c) => n + c.length, 0);
const sumLoss: LossFunction = (scores) => ({
  loss: -scores.logp.reduce((s, lp) => s + lp.reduce((a, v) => a + v, 0), 0) / tokenCount,
  gradLogp: scores.logp.map((lp) => lp.map(() => -1 / tokenCount)),
});

async function sequentialUpdate(policy: Policy, loss: LossFunction) {
  const { scores, handle } = await policy.forward(batch);
  const out = loss(scores, batch);
  await policy.backward(handle, out);
  return { loss: out.loss, ...(await policy.optimizerStep({ learningRate: 1e-2 })) };
}

describe('forward → backward → optimizerStep', () => {
  it('is bit for bit the update step() makes, and policyStep over a wrapping third-party Policy makes it too', async () => {
    const stepped = BuiltinPolicy.create(tiny, { seed: 4 });
    const sequential = BuiltinPolicy.create(tiny, { seed: 4 });
    const wrapped = BuiltinPolicy.create(tiny, { seed: 4 });
    const remote: Pick<Policy, 'forward' | 'backward' | 'optimizerStep'> = {
      forward: (b, o) => wrapped.forward(b, o), backward: (h, g) => wrapped.backward(h, g), optimizerStep: (o) => wrapped.optimizerStep(o),
    };
    for (let i = 0; i < 2; i++) {
      const a = await stepped.step(batch, sftLoss(), { learningRate: 1e-2 });
      const b = await sequentialUpdate(sequential, sftLoss());
      const c = await policyStep(remote, batch, sftLoss(), { learningRate: 1e-2 });
      expect(b).toEqual(a);
      expect(c).toEqual(a);
    }
    const after = (await stepped.score(batch)).logp;
    expect((await sequential.score(batch)).logp).toEqual(after);
    expect((await wrapped.score(batch)).logp).toEqual(after);
  });

  it('the forward scores equal score() at the same temperature', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 5 });
    const forward = await policy.forward(batch, { temperature: 0.7 });
    expect(forward.scores).toEqual(await policy.score(batch, { temperature: 0.7 }));
  });

  it('backward calls add up until optimizerStep: two halves make the update of the whole batch', async () => {
    const whole = BuiltinPolicy.create(tiny, { seed: 6 });
    const parts = BuiltinPolicy.create(tiny, { seed: 6 });
    const full = await sequentialUpdate(whole, sumLoss);
    for (const rows of [[0, 2], [1]]) {
      const part = half(rows);
      const { scores, handle } = await parts.forward(part);
      await parts.backward(handle, sumLoss(scores, part));
    }
    const accumulated = await parts.optimizerStep({ learningRate: 1e-2 });
    expect(accumulated.gradNorm).toBeCloseTo(full.gradNorm, 5);
    expect(accumulated.step).toBe(1);
    const expected = (await whole.score(batch)).logp;
    (await parts.score(batch)).logp.forEach((lp, i) => expectClose(lp, expected[i], { atol: 1e-5, rtol: 1e-5 }));
  });

  it('step() holds the queue from its forward to its optimizer step: a score made meanwhile waits and sees the new weights', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 7 });
    const twin = BuiltinPolicy.create(tiny, { seed: 7 });
    const [stepped, scored] = await Promise.all([policy.step(batch, sftLoss()), policy.score(batch)]);
    expect(stepped).toEqual(await twin.step(batch, sftLoss()));
    expect(scored).toEqual(await twin.score(batch));
  });
});

describe('forward handles and typed errors', () => {
  const stale = { code: 'GRPO_INVALID_ARGUMENT', message: expect.stringContaining('stale') };

  it('a handle is stale after a later forward, a score, or its own backward', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 8 });
    const gradient = (scores: { logp: Float32Array[] }) => ({ gradLogp: scores.logp.map((lp) => lp.map(() => 0.1)) });
    const first = await policy.forward(batch);
    const second = await policy.forward(batch);
    await expect(policy.backward(first.handle, gradient(first.scores))).rejects.toMatchObject(stale);
    await policy.backward(second.handle, gradient(second.scores));
    await expect(policy.backward(second.handle, gradient(second.scores))).rejects.toMatchObject(stale);
    const third = await policy.forward(batch);
    await policy.score(batch);
    await expect(policy.backward(third.handle, gradient(third.scores))).rejects.toMatchObject(stale);
    await expect(policy.backward({} as never, gradient(third.scores))).rejects.toMatchObject(stale);
  });

  it('a gradient of the wrong shape is refused and leaves the handle usable', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 9 });
    const { scores, handle } = await policy.forward(batch);
    await expect(policy.backward(handle, { gradLogp: [new Float32Array(2)] })).rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH' });
    await policy.backward(handle, sftLoss()(scores, batch));
  });

  it('dispose() between forward and backward: backward and optimizerStep are typed errors', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 10 });
    const { scores, handle } = await policy.forward(batch);
    policy.dispose();
    const disposed = { code: 'GRPO_INVALID_ARGUMENT', message: expect.stringContaining('disposed') };
    await expect(policy.backward(handle, sftLoss()(scores, batch))).rejects.toMatchObject(disposed);
    await expect(policy.optimizerStep()).rejects.toMatchObject(disposed);
    await expect(policy.forward(batch)).rejects.toMatchObject(disposed);
  });

  it('a frozen copy refuses the three training calls; unknown options are named', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 11 });
    const frozen = await policy.clone();
    const unsupported = { code: 'GRPO_UNSUPPORTED' };
    await expect(frozen.forward(batch)).rejects.toMatchObject(unsupported);
    await expect(frozen.optimizerStep()).rejects.toMatchObject(unsupported);
    const { handle } = await policy.forward(batch);
    await expect(frozen.backward(handle, { gradLogp: [] })).rejects.toMatchObject(unsupported);
    await expect(policy.optimizerStep({ learningrate: 1 } as never)).rejects.toMatchObject({ code: 'GRPO_UNKNOWN_OPTION' });
    await expect(policy.step(batch, sftLoss(), { lerningRate: 1 } as never)).rejects.toMatchObject({ code: 'GRPO_UNKNOWN_OPTION', message: expect.stringContaining('learningRate') });
  });
});
