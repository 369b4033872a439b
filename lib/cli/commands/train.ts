// `grpo train`: one recipe from a starting checkpoint into a run directory, or --resume one.
import { resolveConfig } from '../../trainer/recipes.js';
import { RunDir } from '../../trainer/run-dir.js';
import { DEVICE_FLAG, deviceFlag } from '../args.js';
import { readConfigFile, required, type Command } from '../command.js';
import { loadPolicy } from '../models.js';
import { trainWithProgress } from '../run-training.js';

export const trainCommand: Command = {
  name: 'train',
  summary: 'train a policy with a recipe (rank-grpo, remark, remark-mean, ccr, grpo), or resume a run',
  usage: 'grpo train --recipe <name> --policy <checkpoint> --out <run dir> [--device cpu|cuda|auto] [--config <file.json>] [--<option> <value> ...]\n       grpo train --resume <run dir> [--steps <n>] [--device cpu|cuda|auto]',
  description: 'Runs GRPO steps with validation, best-checkpoint selection and early stopping, then evaluates the selected checkpoint\n' +
    'on the test split and writes a report. Ctrl-C finishes the current step, saves a checkpoint and exits; --resume continues exactly.',
  flags: [
    { name: 'recipe', help: 'rank-grpo | remark | remark-mean | ccr | grpo (default remark)' },
    { name: 'policy', help: 'starting checkpoint folder (e.g. runs/sft/policy)' },
    { name: 'out', help: 'run directory to create' },
    { name: 'config', help: 'JSON file with trainer options (flags override it)' },
    { name: 'resume', help: 'run directory to continue from its latest checkpoint' },
    { ...DEVICE_FLAG, help: `${DEVICE_FLAG.help}; with --resume, overrides the run's device (checkpoints load on either)` },
  ],
  acceptsConfig: true,
  async run(args, reporter) {
    const resumeDir = args.flags.get('resume');
    const device = deviceFlag(args);
    if (resumeDir !== undefined) {
      const config = await new RunDir(resumeDir).config();
      if (device) config.device = device;
      const steps = args.overrides.steps as number | undefined;
      const result = await trainWithProgress(reporter, `resume ${config.recipe}`, { resumeDir, config, steps });
      if (result.test) reporter.line(JSON.stringify({ test: result.test }, null, 2));
      return;
    }
    const file = await readConfigFile(args.flags.get('config'));
    const recipe = args.flags.get('recipe');
    const config = resolveConfig(file, { ...args.overrides, ...(recipe ? { recipe: recipe as never } : {}), ...(device ? { device } : {}) });
    const policy = await loadPolicy(required(args, 'policy', 'checkpoint folder'), config.device);
    const result = await trainWithProgress(reporter, `train ${config.recipe}`, { config, policy, runDir: required(args, 'out', 'run directory') });
    if (result.test) reporter.line(JSON.stringify({ test: result.test }, null, 2));
    if (result.test) reporter.line(`Run directory: ${result.runDir} (metrics.jsonl, validation.jsonl, test.json, report/report.md)`);
  },
};
