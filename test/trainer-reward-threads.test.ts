// `rewards.threads`: a run whose step rewards are computed on worker threads (lib/rewards/pool.ts) logs exactly what
// the same run with inline rewards logs, for a recommendation recipe and for CCR. The trainer runs from the compiled
// dist/ (as `npm test` builds it), where the pool's worker file is; from the sources the pool refuses to start.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as dist from '../dist/index.js';
import { resolveConfig as resolveFromSources } from '../lib/trainer/recipes.js';
import { recommendExamples, sft } from '../lib/trainer/sft.js';
import { moviesData } from '../lib/trainer/tasks.js';
import { train as trainFromSources } from '../lib/trainer/train.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { tempRunRoot, tinyConfig, tinyMoviesDir, tinyPolicy, tinyTokenizer } from './helpers/trainer.js';

const rows = (runDir: string) => readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n')
  .map((l) => JSON.parse(l)).map(({ time: _t, elapsed: _e, ...rest }) => rest);

describe('rewards on worker threads in a run', () => {
  const moviesDir = tinyMoviesDir([1, 2, 1, 2], 2);
  const root = tempRunRoot();
  const start = join(root, 'sft', 'policy');
  const long = join(root, 'long'); // CCR prompts need more positions than the SFT model has
  const recipes = {
    remark: { recipe: 'remark', rewards: { ranks: 3, catalog: 'benchmark' }, validation: { every: 0, metric: 'unionRecall', patience: 0 }, data: { moviesDir } },
    ccr: { recipe: 'ccr', rewards: { problems: 2 }, validation: { every: 0, patience: 0 }, data: { arithmeticTrain: 40, arithmeticEval: 4 } },
  } as const;
  const config = (recipe: keyof typeof recipes, threads: number) => dist.resolveConfig({
    ...recipes[recipe], seed: 3, steps: 2, groups: 4, candidates: 3, learningRate: 1e-3, checkpointEvery: 10,
    generation: { maxNewTokens: 32, temperature: 1 }, rewards: { ...recipes[recipe].rewards, threads },
  } as never);

  beforeAll(async () => {
    const policy = await tinyPolicy();
    await sft(policy, recommendExamples(moviesData(moviesDir), 3), { steps: 60, batchSize: 4, learningRate: 1e-2 }, { out: join(root, 'sft') });
    const tokenizer = tinyTokenizer();
    await BuiltinPolicy.create({ ...tinyConfig(tokenizer.vocabSize), maxPositions: 1024 }, { seed: 2, tokenizer }).save(long);
  });

  it.each(['remark', 'ccr'] as const)('%s: 3 threads log what inline rewards log', async (recipe) => {
    const run = async (threads: number) => {
      const runDir = join(root, `${recipe}-${threads}`);
      await dist.train({ config: config(recipe, threads), policy: await dist.BuiltinPolicy.load(recipe === 'ccr' ? long : start), runDir, loadPolicy: (d: string) => dist.BuiltinPolicy.load(d), skipTest: true });
      return rows(runDir);
    };
    const inline = await run(0);
    expect(inline).toHaveLength(2);
    expect(inline[0].stats.rewardMean).toEqual(expect.any(Number));
    expect(await run(3)).toEqual(inline);
  });

  it('from the sources (no compiled worker) the pool says why it cannot start', async () => {
    const c = resolveFromSources({ ...recipes.remark, steps: 1, groups: 2, candidates: 2, generation: { maxNewTokens: 8 }, rewards: { ...recipes.remark.rewards, threads: 2 } } as never);
    const error = await trainFromSources({ config: c, policy: await BuiltinPolicy.load(start), runDir: join(root, 'sources'), loadPolicy: (d) => BuiltinPolicy.load(d), skipTest: true })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'GRPO_UNSUPPORTED', message: expect.stringContaining('pool-worker.js is missing') });
  });
});
