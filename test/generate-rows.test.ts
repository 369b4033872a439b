// generate in row chunks (maxRows): every row gets bitwise what one call over all rows gives it, for sampled,
// penalised, masked, per-row and greedy settings on 1 and 2 threads; bad maxRows values are typed errors; a trainer
// step and an evaluation with generation.maxRows equal those without.
import { afterEach, describe, expect, it } from 'vitest';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import type { ModelConfig } from '../lib/policy/config.js';
import type { GenerateOptions, Generation } from '../lib/policy/policy.js';
import { setThreads } from '../lib/runtime.js';
import { trainStep } from '../lib/trainer/loop.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { resumeConfig } from '../lib/trainer/resume.js';
import { createTask } from '../lib/trainer/tasks.js';
import { randomInts } from './helpers/random.js';
import { tinyConfig, tinyMoviesDir, tinyTokenizer } from './helpers/trainer.js';

const tiny: ModelConfig = {
  vocabSize: 37, hiddenSize: 32, intermediateSize: 48, numLayers: 2, numHeads: 4, numKvHeads: 2, headDim: 8,
  maxPositions: 64, rmsNormEps: 1e-6, ropeTheta: 10000, tieEmbeddings: false, attentionBias: true, architecture: 'Qwen2ForCausalLM',
};

// 7 rows (not a multiple of 3), prompts of different lengths
const prompts = Array.from({ length: 7 }, (_, i) => randomInts(1 + ((i * 5) % 9), 37, 40 + i));

const allowed = prompts.map((_, i) => [i, i + 1, i + 2, 20 + i, 36]);
const settings: Record<string, GenerateOptions> = {
  'temperature 1 with top-p': { maxNewTokens: 10, temperature: 1, topP: 0.8, seed: 11 },
  'repetition and presence penalties over the history': { maxNewTokens: 12, temperature: 0.9, repetitionPenalty: 1.3, presencePenalty: 0.5, seed: 4 },
  'per-row temperatures, allow lists and a stop token': {
    maxNewTokens: 9, seed: 7, stopTokens: [36], temperature: Float32Array.from(prompts, (_, i) => 0.5 + i / 4),
    allow: { ids: Int32Array.from(allowed.flat()), offsets: Int32Array.from(allowed.map((_, i) => 5 * i).concat(35)) },
  },
  greedy: { maxNewTokens: 10, temperature: 0 },
};

function bits(out: Generation[]) {
  return out.map((g) => ({
    tokens: Array.from(g.tokens), logp: Array.from(new Uint32Array(g.logp.buffer, g.logp.byteOffset, g.logp.length)), truncated: g.truncated,
  }));
}

afterEach(() => setThreads(0));

describe('generate maxRows', () => {
  for (const threads of [1, 2]) {
    for (const [name, options] of Object.entries(settings)) {
      it(`${name}: maxRows 1, 3 and all equal one call bitwise (${threads} thread${threads > 1 ? 's' : ''})`, async () => {
        setThreads(threads);
        const policy = BuiltinPolicy.create(tiny, { seed: 5 });
        const whole = bits(await policy.generate(prompts, options));
        expect(new Set(whole.map((g) => g.tokens.join())).size).toBeGreaterThan(1);
        for (const maxRows of [1, 3, 7, 100]) expect(bits(await policy.generate(prompts, { ...options, maxRows }))).toEqual(whole);
      });
    }
  }

  it('a chunk draws as its rows of the whole batch, not as a batch of its own', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 5 });
    const same = Array.from({ length: 4 }, () => prompts[2]);
    const options = { maxNewTokens: 10, temperature: 1, seed: 3 };
    const whole = bits(await policy.generate(same, options));
    const alone = bits(await policy.generate(same.slice(0, 1), options));
    expect(bits(await policy.generate(same, { ...options, maxRows: 1 }))).toEqual(whole);
    expect(whole.slice(1).some((g) => g.tokens.join() !== alone[0].tokens.join())).toBe(true);
  });

  it('maxRows must be a non-negative integer', async () => {
    const policy = BuiltinPolicy.create(tiny, { seed: 5 });
    await expect(policy.generate(prompts, { maxNewTokens: 2, maxRows: -1 })).rejects.toMatchObject({ code: 'GRPO_VALUE_RANGE' });
    for (const maxRows of [1.5, Number.NaN, '2' as unknown as number]) {
      await expect(policy.generate(prompts, { maxNewTokens: 2, maxRows })).rejects.toMatchObject({ code: 'GRPO_INVALID_ARGUMENT' });
    }
  });
});

describe('config "generation.maxRows" in the trainer', () => {
  it('the rollout and the evaluation generate maxRows rows per call; the step\'s metrics and parameters and the evaluation equal those of one call', async () => {
    const moviesDir = tinyMoviesDir([1, 2, 3], 1);
    const runs = [];
    for (const maxRows of [0, 4]) {
      const config = resolveConfig({
        recipe: 'remark', groups: 2, candidates: 3, learningRate: 1e-2, generation: { maxNewTokens: 12, maxRows },
        rewards: { ranks: 3, catalog: 'none' }, data: { moviesDir },
      });
      const policy = BuiltinPolicy.create({ ...tinyConfig(tinyTokenizer().vocabSize), numLayers: 2 }, { seed: 1, tokenizer: tinyTokenizer() });
      const calls: (number | undefined)[] = [];
      const generate = policy.generate.bind(policy);
      policy.generate = (prompts, options) => (calls.push(options?.maxRows), generate(prompts, options));
      const task = createTask(config, policy.tokenizer!);
      const record = await trainStep({ config, policy, reference: await policy.clone(), task, lossOptions: config.loss }, 0, 0);
      const evaluation = await task.evaluate(policy, 'validation', 3);
      runs.push({ record: withoutTimes(record), evaluation, tensors: policy.getTensors().map((t) => Array.from(new Uint32Array(t.data.buffer))) });
      expect(calls).toEqual([maxRows, maxRows]);
      policy.dispose();
    }
    expect(runs[1]).toEqual(runs[0]);
  });
});

describe('config "generation.maxRows": checks and resume', () => {
  it('is a non-negative integer, may change on resume (no bit changes), while the sampler\'s options may not', () => {
    const input = { recipe: 'remark' as const, rewards: { catalog: 'none' as const }, data: { moviesDir: tinyMoviesDir([1], 1) } };
    expect(() => resolveConfig({ ...input, generation: { maxRows: -2 } })).toThrow(expect.objectContaining({ code: 'GRPO_VALUE_RANGE' }));
    const saved = resolveConfig(input);
    expect(saved.generation.maxRows).toBe(0);
    expect(resumeConfig(saved, { generation: { maxRows: 8 } }).generation.maxRows).toBe(8);
    expect(() => resumeConfig(saved, { generation: { topK: 3 } })).toThrow(expect.objectContaining({ code: 'GRPO_INVALID_ARGUMENT' }));
  });
});

/** A step record without its wall-clock fields (StepRecord: everything else is a function of config, seed and step). */
function withoutTimes({ time: _time, elapsed: _elapsed, ...rest }: { time: unknown; elapsed: unknown }): object {
  return rest;
}
