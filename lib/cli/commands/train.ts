// `grpo train`: one recipe from a starting checkpoint into a run directory, or --resume one.
import { basename } from 'node:path';
import { GrpoError } from '../../errors.js';
import { resolveConfig } from '../../trainer/recipes.js';
import { RESUMABLE_OPTIONS } from '../../trainer/resume.js';
import { DEVICE_FLAG, deviceFlag } from '../args.js';
import { readConfigFile, required, type Command } from '../command.js';
import { loadPolicy, loraToLoad } from '../models.js';
import { trainWithProgress } from '../run-training.js';

/** Flags that say where a first run starts from; a resumed run has its own. */
const RUN_SOURCE_FLAGS = ['policy', 'out', 'config'];

export const trainCommand: Command = {
  name: 'train',
  summary: 'train a policy with a recipe (rank-grpo, remark, remark-mean, ccr, grpo), or resume a run',
  usage: 'grpo train --recipe <name> --policy <checkpoint> --out <run dir> [--device cpu|cuda|auto] [--config <file.json>] [--<option> <value> ...]\n' +
    '       grpo train --resume <run dir> [--steps <n>] [--device cpu|cuda|auto] [--<option> <value> ...]',
  description: 'Runs GRPO steps with validation, best-checkpoint selection and early stopping, then evaluates the selected checkpoint\n' +
    'on the test split and writes a report. Ctrl-C (or SIGTERM) finishes the current step, saves a checkpoint and exits with status\n' +
    '130 (143); --resume continues exactly, or writes the test evaluation and report a stopped run had left. On resume only these\n' +
    `options may change: ${RESUMABLE_OPTIONS.join(', ')}; any other is refused (it would change what the remaining steps compute).\n` +
    'LoRA: --lora.rank 16 --lora.targetModules q_proj,v_proj (and --lora.alpha, --lora.dropout, --lora.rslora) trains adapters on\n' +
    'the frozen --policy; checkpoints are then adapters in PEFT\'s format (grpo merge <checkpoint>/policy --out <folder>).\n' +
    '--lora.from <adapter folder> starts them from an adapter in PEFT\'s format (its r, lora_alpha, target_modules) on that base.\n\n' +
    'Tasks (--task; default the recipe\'s own; docs/trainer.md "Tasks", your own files: docs/datasets.md "Train on your own data"):\n' +
    '  math       ccr, grpo: --data.math train.jsonl (math/1) [--data.mathValidation v.jsonl] [--data.mathTest t.jsonl]; a split\n' +
    '             without its file is held out of the training file (--data.heldOut, 0 = 10%; --data.splitSeed); N, the shared\n' +
    '             cap and the packing: --rewards.problems, --generation.maxNewTokens, --rewards.order fixed|shuffled.\n' +
    '             No file: the generated arithmetic. Demo file: data/gsm8k/gsm8k-test-300.jsonl\n' +
    '  recommend  rank-grpo, rank-grpo-requests, remark, remark-mean: --data.recommend <folder or train.jsonl> (recommend/1) with\n' +
    '             --data.catalog catalog.jsonl (catalog/1; default the folder\'s catalog.jsonl), splits as for math; films by\n' +
    '             "Title (Year)" (--rewards.yearTolerance 2), books or music by "Title (Creator)" (--data.itemKey creator,\n' +
    '             --data.itemNoun books, --data.creatorLabel Author); --rewards.normalization, --rewards.catalog none; select\n' +
    '             with --validation.metric unionRecall on files without relevant sets. No files: movies-multi (--data.moviesDir)\n' +
    '  qa         the same four with --task qa: --data.qa train.jsonl (qa/1) [--data.qaValidation v.jsonl] [--data.qaTest t.jsonl];\n' +
    '             held out as for math; no file: the bundled ProtoQA dev set. Lists of K = 10 answers (--rewards.ranks);\n' +
    '             remark scores the union of the respondents\' answers, remark-mean their count-weighted mean, rank-grpo\n' +
    '             one drawn respondent; test and validation report respondentRecall (recall@K per respondent) and clusterRecall',
  flags: [
    { name: 'recipe', help: 'rank-grpo | rank-grpo-requests | remark | remark-mean | ccr | grpo (default remark)' },
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
    const recipe = args.flags.get('recipe');
    const overrides = { ...args.overrides, ...(recipe ? { recipe: recipe as never } : {}), ...(device ? { device } : {}) };
    if (resumeDir !== undefined) {
      const extra = RUN_SOURCE_FLAGS.filter((name) => args.flags.has(name));
      if (extra.length > 0) {
        throw new GrpoError('GRPO_INVALID_ARGUMENT', `--resume continues ${resumeDir} from its own checkpoint and config.json; remove ${extra.map((f) => `--${f}`).join(', ')}`);
      }
      const result = await trainWithProgress(reporter, `resume ${basename(resumeDir)}`, { resumeDir, overrides });
      if (result.test) reporter.line(JSON.stringify({ test: result.test }, null, 2));
      return;
    }
    const file = await readConfigFile(args.flags.get('config'));
    const config = resolveConfig(file, overrides);
    const policy = await loadPolicy(required(args, 'policy', 'checkpoint folder'), config.device, loraToLoad(config.lora, [file, overrides]));
    const result = await trainWithProgress(reporter, `train ${config.recipe}`, { config, policy, runDir: required(args, 'out', 'run directory') });
    if (result.test) reporter.line(JSON.stringify({ test: result.test }, null, 2));
    if (result.test) reporter.line(`Run directory: ${result.runDir} (metrics.jsonl, validation.jsonl, test.json, report/report.md)`);
  },
};
