// The built-in policy end to end on tiny configs: KV-cache generation vs recomputation, greedy
// determinism (and across thread counts), overfitting, frozen clones, typed errors.
import { describe, expect, it } from 'vitest';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import type { ModelConfig } from '../lib/policy/config.js';
import { sftLoss } from '../lib/policy/policy.js';
import { setThreads } from '../lib/runtime.js';
import { expectClose } from './helpers/close.js';
import { randomInts } from './helpers/random.js';

const tiny: ModelConfig = {
  vocabSize: 37, hiddenSize: 32, intermediateSize: 48, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 8,
  maxPositions: 64, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: true, architecture: 'Qwen2ForCausalLM',
};

const prompts = [randomInts(5, 37, 1), randomInts(9, 37, 2), randomInts(1, 37, 3)];

describe('generation', () => {
  it('KV-cache generation gives the same log-probs as scoring the whole sequence', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 3 });
    const out = await policy.generate(prompts, { maxNewTokens: 12, temperature: 1, seed: 9 });
    const scored = await policy.score({ prompts, completions: out.map((g) => g.tokens) });
    out.forEach((g, i) => {
      expect(g.tokens.length).toBe(12);
      expect(g.truncated).toBe(true);
      expectClose(g.logp, scored.logp[i], { atol: 2e-5, rtol: 1e-4 });
    });
  });

  it('sampler options per row: allow masks, penalties over prompt + completion, temperature-scaled log-probs', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 6 });
    const allowed = [[3, 4, 5], [30, 31], [7]];
    const ids = Int32Array.from(allowed.flat());
    const offsets = Int32Array.from([0, 3, 5, 6]);
    const masked = await policy.generate(prompts, { maxNewTokens: 8, seed: 2, allow: { ids, offsets } });
    masked.forEach((g, i) => g.tokens.forEach((t) => expect(allowed[i]).toContain(t)));
    const fresh = await policy.generate(prompts, { maxNewTokens: 20, seed: 2, presencePenalty: 1e4 });
    fresh.forEach((g, i) => {
      const seen = [...prompts[i], ...g.tokens];
      expect(new Set(seen).size).toBe(seen.length);
    });
    const warm = await policy.generate(prompts, { maxNewTokens: 10, seed: 2, temperature: 0.7 });
    const scored = await policy.score({ prompts, completions: warm.map((g) => g.tokens) }, { temperature: 0.7 });
    warm.forEach((g, i) => expectClose(g.logp, scored.logp[i], { atol: 2e-5, rtol: 1e-4 }));
  });

  it('greedy generation is deterministic, also across thread counts, and picks the argmax', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 4 });
    setThreads(1);
    const one = await policy.generate(prompts, { maxNewTokens: 10, temperature: 0 });
    setThreads(2);
    const two = await policy.generate(prompts, { maxNewTokens: 10, temperature: 0 });
    expect(two.map((g) => Array.from(g.tokens))).toEqual(one.map((g) => Array.from(g.tokens)));
    expect(two.map((g) => Array.from(g.logp))).toEqual(one.map((g) => Array.from(g.logp)));
    const logits = await policy.logits([Int32Array.from([...prompts[0], ...one[0].tokens.slice(0, 3)])]);
    const row = prompts[0].length + 2; // position that predicted token 3
    const scores = logits.subarray(row * 37, (row + 1) * 37);
    expect(one[0].tokens[3]).toBe(scores.indexOf(Math.max(...scores)));
  });

  it('sampling with the same seed repeats; another seed differs; stop tokens end rows early', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 5 });
    const a = await policy.generate(prompts, { maxNewTokens: 16, seed: 1, topK: 10, topP: 0.9 });
    const b = await policy.generate(prompts, { maxNewTokens: 16, seed: 1, topK: 10, topP: 0.9 });
    const c = await policy.generate(prompts, { maxNewTokens: 16, seed: 2, topK: 10, topP: 0.9 });
    expect(b.map((g) => Array.from(g.tokens))).toEqual(a.map((g) => Array.from(g.tokens)));
    expect(c.map((g) => Array.from(g.tokens))).not.toEqual(a.map((g) => Array.from(g.tokens)));
    const stop = a[1].tokens[4];
    const stopped = await policy.generate(prompts, { maxNewTokens: 16, seed: 1, topK: 10, topP: 0.9, stopTokens: [stop] });
    const first = Array.from(a[1].tokens).indexOf(stop);
    expect(Array.from(stopped[1].tokens)).toEqual(Array.from(a[1].tokens.slice(0, first + 1)));
    expect(stopped[1].truncated).toBe(false);
  });
});

describe('training', () => {
  it('overfits a handful of sequences to near-zero loss', async () => {
    const policy = BuiltinPolicy.create({ ...tiny, attentionBias: false, tieEmbeddings: true, architecture: 'LlamaForCausalLM' },
      { seed: 1, optimizer: { learningRate: 1e-2, weightDecay: 0 } });
    const batch = { prompts: prompts.map((p) => p.slice(0, 1)), completions: [randomInts(12, 37, 7), randomInts(12, 37, 8), randomInts(12, 37, 9)] };
    let last = Infinity;
    for (let i = 0; i < 150; i++) last = (await policy.step(batch, sftLoss())).loss;
    expect(last).toBeLessThan(0.05);
    const greedy = await policy.generate(batch.prompts, { maxNewTokens: 12, temperature: 0 });
    expect(greedy.map((g) => Array.from(g.tokens))).toEqual(batch.completions.map((c) => Array.from(c)));
  });

  it('bf16 dense matmuls stay close to float32 and still train', async () => {
    const f32 = BuiltinPolicy.create(tiny, { seed: 2 });
    const bf16 = BuiltinPolicy.create(tiny, { seed: 2, bf16Matmuls: true });
    const batch = { prompts, completions: [randomInts(6, 37, 10), randomInts(3, 37, 11), randomInts(8, 37, 12)] };
    const [a, b] = [await f32.score(batch), await bf16.score(batch)];
    a.logp.forEach((lp, i) => expectClose(b.logp[i], lp, { atol: 2e-2, rtol: 2e-2 }));
    const first = (await bf16.step(batch, sftLoss())).loss;
    let last = first;
    for (let i = 0; i < 20; i++) last = (await bf16.step(batch, sftLoss())).loss;
    expect(last).toBeLessThan(first * 0.8);
  });

  it('bf16 dense matmuls train bitwise identically on 1 and 2 threads (AMX or AVX512_BF16 where the CPU has them)', async () => {
    const run = async (threads: number) => {
      setThreads(threads);
      const policy = BuiltinPolicy.create(tiny, { seed: 3, bf16Matmuls: true });
      const batch = { prompts, completions: [randomInts(6, 37, 16), randomInts(3, 37, 17), randomInts(8, 37, 18)] };
      for (let i = 0; i < 2; i++) await policy.step(batch, sftLoss());
      return (await policy.score(batch)).logp;
    };
    expect(await run(2)).toEqual(await run(1));
  });

  it('concurrent calls on a policy and its clone give the results of sequential calls', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 8 });
    const reference = await policy.clone();
    const batch = { prompts, completions: [randomInts(6, 37, 13), randomInts(3, 37, 14), randomInts(8, 37, 15)] };
    const sequential = [await reference.score(batch), await policy.generate(prompts, { maxNewTokens: 6, seed: 1 }), await policy.score(batch)];
    const concurrent = await Promise.all([reference.score(batch), policy.generate(prompts, { maxNewTokens: 6, seed: 1 }), policy.score(batch)]);
    expect(concurrent).toEqual(sequential);
  });

  it('training is bitwise identical for 1 and 2 threads; the frozen clone keeps the old weights', async () => {
    const run = async (threads: number) => {
      setThreads(threads);
      const policy = BuiltinPolicy.create(tiny, { seed: 2 });
      const reference = await policy.clone();
      const batch = { prompts, completions: [randomInts(6, 37, 10), randomInts(3, 37, 11), randomInts(8, 37, 12)] };
      const before = await reference.score(batch);
      for (let i = 0; i < 3; i++) await policy.step(batch, sftLoss());
      expect(await reference.score(batch)).toEqual(before);
      await expect(reference.step(batch, sftLoss())).rejects.toMatchObject({ code: 'GRPO_UNSUPPORTED' });
      return (await policy.score(batch)).logp;
    };
    expect(await run(2)).toEqual(await run(1));
  });

  it('a batch of several scoring groups (about 4096 tokens each) gives every row the bits of scoring it alone', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 5 });
    const lengths = Array.from({ length: 250 }, (_, i) => 21 + ((i * 17) % 43)); // 250 rows, 10,506 tokens
    const batch = {
      prompts: lengths.map((_, i) => randomInts(1 + (i % 5), 37, 100 + i)),
      completions: lengths.map((len, i) => randomInts(len - 1 - (i % 5), 37, 400 + i)),
    };
    const together = await policy.score(batch);
    for (let i = 0; i < lengths.length; i++) {
      const alone = await policy.score({ prompts: [batch.prompts[i]], completions: [batch.completions[i]] });
      expect(together.logp[i]).toEqual(alone.logp[0]);
      expect(together.entropy[i]).toEqual(alone.entropy[0]);
    }
  });
});

describe('bad input', () => {
  const policy = BuiltinPolicy.create(tiny, { seed: 1 });
  it('ids outside the vocabulary', async () => {
    await expect(policy.generate([[1, 37]])).rejects.toMatchObject({ code: 'GRPO_INDEX_RANGE', message: expect.stringContaining('prompts[0][1]') });
    await expect(policy.score({ prompts: [[1]], completions: [[-1]] })).rejects.toMatchObject({ code: 'GRPO_INDEX_RANGE' });
  });
  it('context overflow and mismatched shapes', async () => {
    await expect(policy.score({ prompts: [new Int32Array(40)], completions: [new Int32Array(30)] }))
      .rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH', message: expect.stringContaining('max_position_embeddings') });
    await expect(policy.score({ prompts: [[1], [2]], completions: [[3]] })).rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH' });
    const wrongGrad = () => ({ loss: 0, gradLogp: [new Float32Array(5)] });
    await expect(policy.step({ prompts: [[1]], completions: [[2, 3]] }, wrongGrad)).rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH' });
    await expect(policy.generate([new Int32Array(64)])).rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH' });
  });
  it('bad configs and options', () => {
    expect(() => BuiltinPolicy.create({ ...tiny, numKvHeads: 3 })).toThrow(expect.objectContaining({ code: 'GRPO_VALUE_RANGE' }));
    return expect(policy.generate([[1]], { topP: 0 })).rejects.toMatchObject({ code: 'GRPO_VALUE_RANGE' });
  });
  it('createAsync draws the same weights as create', async () => {
    const a = BuiltinPolicy.create(tiny, { seed: 9 });
    const b = await BuiltinPolicy.createAsync(tiny, { seed: 9 });
    expect(b.getTensors()).toEqual(a.getTensors());
    await expect(BuiltinPolicy.createAsync({ ...tiny, headDim: 7 })).rejects.toMatchObject({ code: 'GRPO_VALUE_RANGE' });
  });

  it('a disposed policy', async () => {
    const p = BuiltinPolicy.create(tiny);
    p.dispose();
    await expect(p.score({ prompts: [[1]], completions: [[2]] })).rejects.toMatchObject({ code: 'GRPO_INVALID_ARGUMENT' });
  });
});
