// Resume equals uninterrupted: a run stopped at an epoch boundary (Ctrl-C path), a run that crashes
// during validation and one that crashes while writing a checkpoint, all resumed from their run
// directories, log exactly the metrics, validations and test results of an uninterrupted run with the
// same seed (wall times aside). A run killed during its test evaluation gets it on resume; a resume
// changes only the options that leave the steps as they were.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { resume } from '../lib/trainer/resume.js';
import { recommendExamples, sft } from '../lib/trainer/sft.js';
import { createTask, moviesData } from '../lib/trainer/tasks.js';
import { train, type TrainerEvent } from '../lib/trainer/train.js';
import type { TrainerConfig } from '../lib/trainer/config.js';
import { tempRunRoot, tinyMoviesDir, tinyPolicy, tinyTokenizer } from './helpers/trainer.js';

const loadPolicy = (dir: string) => BuiltinPolicy.load(dir);

function config(moviesDir: string, recipe: 'remark' | 'rank-grpo'): TrainerConfig {
  return resolveConfig({
    recipe, seed: 7, steps: 6, groups: 2, candidates: 3, learningRate: 3e-3, checkpointEvery: 2, testPrompts: 3,
    generation: { maxNewTokens: 40, temperature: 0.8 }, rewards: { ranks: 3, catalog: 'benchmark' },
    validation: { every: 2, prompts: 3, metric: 'unionRecall', patience: 0 },
    data: { moviesDir },
  });
}

/** The deterministic part of a run directory: metrics without wall times, validations, test results. */
function outcome(runDir: string) {
  const rows = (file: string) => readFileSync(join(runDir, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const metrics = rows('metrics.jsonl').map(({ time: _time, elapsed: _elapsed, ...rest }) => rest);
  const validation = rows('validation.jsonl').map(({ elapsed: _elapsed, ...rest }) => rest);
  const test = JSON.parse(readFileSync(join(runDir, 'test.json'), 'utf8'));
  return { metrics, validation, test };
}

describe.each(['remark', 'rank-grpo'] as const)('resume (%s)', (recipe) => {
  // train requests with 1, 2 and 1 respondents: 3 units per epoch for remark, 4 rows for rank-grpo; G = 2
  const moviesDir = tinyMoviesDir([1, 2, 1], 3);
  const root = tempRunRoot();
  const c = config(moviesDir, recipe);
  const start = join(root, 'sft');
  const initial = () => BuiltinPolicy.load(join(start, 'policy'));

  beforeAll(async () => {
    // a short SFT on the train lists, so that completions hold items, hits and EOS tokens
    const policy = await tinyPolicy();
    await sft(policy, recommendExamples(moviesData(moviesDir), 3), { steps: 120, batchSize: 4, learningRate: 1e-2 }, { out: start });
  });

  it('an uninterrupted run trains every step, validates, keeps the best and tests it', async () => {
    const result = await train({ config: c, policy: await initial(), runDir: join(root, 'full'), loadPolicy });
    expect(result.steps).toBe(6);
    expect(result.stopReason).toBe('maxSteps');
    const { metrics, validation, test } = outcome(join(root, 'full'));
    expect(metrics.map((m) => m.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(validation.map((v) => v.step)).toEqual([2, 4, 6]);
    expect(test.checkpointStep).toBe(result.bestStep);
    expect(metrics[0].tokens.completion).toBeGreaterThan(0);
    // the policy really moves and earns rewards, so the equalities below mean something
    for (const m of metrics) expect(m.gradNorm).toBeGreaterThan(0);
    expect(Math.max(...metrics.map((m) => m.stats.rewardMean))).toBeGreaterThan(0);
  });

  it('stopped at an epoch boundary and resumed, it logs what the uninterrupted run logged', async () => {
    const runDir = join(root, 'epoch');
    const stop = { requested: false };
    const units = recipe === 'remark' ? 3 : 4;
    const boundary = [1, 2, 3, 4, 5].find((s) => (s * c.groups) % units === 0)!; // steps done when epoch 0 ends exactly
    const task = createTask(c, tinyTokenizer());
    expect([task.epochOf(boundary - 1), task.epochOf(boundary)]).toEqual([(boundary * c.groups) / units - 1, (boundary * c.groups) / units]);
    const onEvent = (e: TrainerEvent) => {
      if (e.type === 'step' && e.record.step === boundary) stop.requested = true;
    };
    const first = await train({ config: c, policy: await initial(), runDir, loadPolicy, onEvent, stop });
    expect(first).toMatchObject({ stopReason: 'interrupted', steps: boundary });
    const second = await resume(runDir, { loadPolicy });
    expect(second.steps).toBe(6);
    expect(outcome(runDir)).toEqual(outcome(join(root, 'full')));
  });

  it('crashing during validation and resuming from the last checkpoint replays exactly', async () => {
    const runDir = join(root, 'crash');
    const inner = createTask(c, tinyTokenizer());
    let validations = 0;
    const crashing = {
      ...inner,
      evaluate: async (...args: Parameters<typeof inner.evaluate>) => {
        if (args[1] === 'validation' && ++validations === 2) throw new Error('simulated crash during validation');
        return inner.evaluate(...args);
      },
    };
    await expect(train({ config: c, policy: await initial(), runDir, loadPolicy, task: crashing })).rejects.toThrow('simulated crash');
    const logged = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n');
    expect(logged.length).toBe(4); // steps 3 and 4 were logged after the step-2 checkpoint
    const resumed = await resume(runDir, { loadPolicy });
    expect(resumed.steps).toBe(6);
    expect(outcome(runDir)).toEqual(outcome(join(root, 'full')));
  });

  it('a crash while writing a checkpoint leaves the previous one in place; resuming replays exactly', async () => {
    const runDir = join(root, 'torn');
    const policy = await initial();
    // the policy's save writes half a file into the step-4 checkpoint and dies
    const torn = new Proxy(policy, {
      get(target, key) {
        if (key === 'save') {
          return async (dir: string) => {
            if (!dir.includes('.step-4.tmp')) return target.save(dir);
            mkdirSync(dir, { recursive: true });
            writeFileSync(join(dir, 'config.json'), '{"vocab_si');
            throw new Error('simulated crash while writing');
          };
        }
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await expect(train({ config: c, policy: torn, runDir, loadPolicy })).rejects.toThrow('simulated crash while writing');
    expect(JSON.parse(readFileSync(join(runDir, 'latest.json'), 'utf8')).step).toBe(2);
    const resumed = await resume(runDir, { loadPolicy });
    expect(resumed.steps).toBe(6);
    expect(outcome(runDir)).toEqual(outcome(join(root, 'full')));
  });

  // recipe-independent: run once
  if (recipe === 'remark') {
    it('a run stopped by patience stays finished unless a raised patience lets it continue', async () => {
      const runDir = join(root, 'patience');
      const inner = createTask(c, tinyTokenizer());
      // every validation scores the same: the best stays at step 2, so patience 2 stops the run at step 4
      const flat = {
        ...inner,
        evaluate: async (...args: Parameters<typeof inner.evaluate>) => {
          const evaluation = await inner.evaluate(...args);
          return args[1] === 'validation' ? { ...evaluation, values: { ...evaluation.values, unionRecall: 0.5 } } : evaluation;
        },
      };
      const patient = { ...c, validation: { ...c.validation, patience: 2 } };
      expect(await train({ config: patient, policy: await initial(), runDir, loadPolicy, task: flat })).toMatchObject({ stopReason: 'patience', steps: 4 });
      await expect(resume(runDir, { loadPolicy, task: flat, steps: 6 })).rejects.toThrow(/already finished \(patience at step 4\); to continue it, resume with a larger validation.patience/);
      const more = await resume(runDir, { loadPolicy, task: flat, overrides: { validation: { patience: 10 } } });
      expect(more).toMatchObject({ stopReason: 'maxSteps', steps: 6, bestStep: 2 });
      expect(JSON.parse(readFileSync(join(runDir, 'test.json'), 'utf8')).checkpointStep).toBe(2);
    });

    it('killed after its final checkpoint, during the test evaluation: resume writes the test and the report', async () => {
      const runDir = join(root, 'untested');
      const inner = createTask(c, tinyTokenizer());
      const killed = {
        ...inner,
        evaluate: async (...args: Parameters<typeof inner.evaluate>) => {
          if (args[1] === 'test') throw new Error('simulated kill during the test evaluation');
          return inner.evaluate(...args);
        },
      };
      await expect(train({ config: c, policy: await initial(), runDir, loadPolicy, task: killed })).rejects.toThrow('simulated kill');
      expect(existsSync(join(runDir, 'test.json'))).toBe(false);
      const resumed = await resume(runDir, { loadPolicy });
      expect(resumed).toMatchObject({ steps: 6, stopReason: 'maxSteps' });
      expect(JSON.parse(JSON.stringify(resumed.test))).toEqual(outcome(join(root, 'full')).test.values);
      expect(outcome(runDir)).toEqual(outcome(join(root, 'full')));
      expect(existsSync(join(runDir, 'report', 'report.md'))).toBe(true);
      // now nothing is left: a second resume is refused
      await expect(resume(runDir, { loadPolicy })).rejects.toThrow(/already finished \(maxSteps at step 6\); to continue it, resume with a larger steps/);
    });

    it('resume applies the options that may change and refuses the others, naming them', async () => {
      const runDir = join(root, 'options');
      const stop = { requested: false };
      const onEvent = (e: TrainerEvent) => {
        if (e.type === 'step' && e.record.step === 3) stop.requested = true;
      };
      await train({ config: c, policy: await initial(), runDir, loadPolicy, onEvent, stop });
      for (const overrides of [{ seed: 8 }, { learningRate: 1, generation: { maxNewTokens: 9 } }, { recipe: 'rank-grpo' as const }]) {
        const error = await resume(runDir, { loadPolicy, overrides }).catch((e: unknown) => e);
        expect(error).toMatchObject({ code: 'GRPO_INVALID_ARGUMENT', message: expect.stringContaining('cannot change on resume') });
        for (const name of Object.keys(overrides)) expect((error as Error).message).toContain(`"${name}`);
      }
      // a typo is an unknown option with a suggestion, as in a first run
      await expect(resume(runDir, { loadPolicy, overrides: { learningrate: 1 } as never })).rejects.toMatchObject({
        code: 'GRPO_UNKNOWN_OPTION', message: expect.stringContaining('did you mean "learningRate"'),
      });
      const checkpoints: number[] = [];
      const record = (e: TrainerEvent) => void (e.type === 'checkpoint' && checkpoints.push(e.step));
      const resumed = await resume(runDir, { loadPolicy, overrides: { checkpointEvery: 1, testPrompts: 2, recompute: true }, onEvent: record });
      expect(resumed.steps).toBe(6);
      expect(checkpoints).toEqual([4, 5, 6]);
      expect(outcome(runDir).test.completions).toHaveLength(2);
      // the steps themselves are those of the uninterrupted run (recomputing activations changes no bit)
      expect(outcome(runDir).metrics).toEqual(outcome(join(root, 'full')).metrics);
    });
  }

  it('a KL stop cannot be added on resume to a run that began without a reference', async () => {
    const runDir = join(root, 'no-reference');
    const stop = { requested: false };
    const onEvent = (e: TrainerEvent) => void (e.type === 'step' && e.record.step === 2 && (stop.requested = true));
    await train({ config: { ...c, loss: { ...c.loss, beta: 0 } }, policy: await initial(), runDir, loadPolicy, onEvent, stop });
    expect(existsSync(join(runDir, 'reference'))).toBe(false);
    await expect(resume(runDir, { loadPolicy, overrides: { validation: { klThreshold: 0.5 } } })).rejects.toMatchObject({
      code: 'GRPO_INVALID_ARGUMENT', message: expect.stringContaining('has no frozen reference'),
    });
  });

  it('the comparison is sensitive: another generation seed gives other metrics', async () => {
    const other = { ...c, seed: 8 };
    await train({ config: other, policy: await initial(), runDir: join(root, 'seed8'), loadPolicy, skipTest: true });
    const rows = (dir: string) => readFileSync(join(root, dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).tokens);
    expect(rows('seed8')).not.toEqual(rows('full'));
  });

  it('a finished run refuses to resume silently; raising steps continues it', async () => {
    await expect(resume(join(root, 'full'), { loadPolicy })).rejects.toMatchObject({ code: 'GRPO_INVALID_ARGUMENT' });
    const more = await resume(join(root, 'full'), { loadPolicy, steps: 7, skipTest: true });
    expect(more.steps).toBe(7);
  });
});
