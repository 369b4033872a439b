// `grpo eval`: greedy evaluation of a checkpoint on a split with the recipe's task and metrics.
import { writeFile } from 'node:fs/promises';
import { bootstrap } from '../../eval/bootstrap.js';
import { formatInterval, markdownTable } from '../../eval/report-markdown.js';
import { resolveConfig } from '../../trainer/recipes.js';
import { tokenizerOf } from '../../trainer/rollout.js';
import type { EvalSplit } from '../../trainer/task.js';
import { createTask } from '../../trainer/tasks.js';
import { GrpoError } from '../../errors.js';
import { DEVICE_FLAG, deviceFlag, intFlag } from '../args.js';
import { readConfigFile, required, type Command } from '../command.js';
import { loadPolicy } from '../models.js';

export const evalCommand: Command = {
  name: 'eval',
  summary: 'evaluate a checkpoint on the validation or test split (bootstrap intervals)',
  usage: 'grpo eval --policy <checkpoint> [--recipe <name>] [--split test|validation] [--prompts <n>] [--json <file>] [--device cpu|cuda|auto] [--<option> <value> ...]',
  description: 'Greedy completions of every prompt of the split, scored with the metrics of the recipe\'s task (recommendation:\n' +
    'recall/NDCG per row, per request, union, relevant set, popularity; CCR: single-problem accuracy and completion tokens),\n' +
    'each with its 95% bootstrap interval over prompts.',
  flags: [
    { name: 'policy', help: 'checkpoint folder' },
    { name: 'recipe', help: 'task and options of this recipe (default remark)' },
    { name: 'split', help: 'test (default) or validation' },
    { name: 'prompts', help: 'first n prompts only (default all)' },
    { name: 'json', help: 'also write the values and per-prompt series here' },
    { name: 'config', help: 'JSON file with trainer options' },
    DEVICE_FLAG,
  ],
  acceptsConfig: true,
  async run(args, reporter) {
    const split = args.flags.get('split') ?? 'test';
    if (split !== 'test' && split !== 'validation') throw new GrpoError('GRPO_INVALID_ARGUMENT', `--split: expected test or validation but received "${split}"`);
    const recipe = args.flags.get('recipe');
    const device = deviceFlag(args);
    const config = resolveConfig(await readConfigFile(args.flags.get('config')), { ...args.overrides, ...(recipe ? { recipe: recipe as never } : {}), ...(device ? { device } : {}) });
    const policy = await loadPolicy(required(args, 'policy', 'checkpoint folder'), config.device);
    const phase = reporter.phase(`eval ${config.recipe} ${split}`, 1, 'evaluations');
    const evaluation = await createTask(config, tokenizerOf(policy)).evaluate(policy, split as EvalSplit, intFlag(args, 'prompts', 0));
    phase.done();
    const names = Object.keys(evaluation.series);
    const intervals = bootstrap(names.map((n) => evaluation.series[n]));
    reporter.line(markdownTable(['metric', 'estimate [95% interval]'], names.map((n, i) => [n, formatInterval(intervals[i])])));
    const json = args.flags.get('json');
    if (json) {
      const series = Object.fromEntries(names.map((n) => [n, { sum: Array.from(evaluation.series[n].sum), count: Array.from(evaluation.series[n].count) }]));
      await writeFile(json, `${JSON.stringify({ split, values: evaluation.values, series, completions: evaluation.completions }, null, 2)}\n`);
    }
  },
};
