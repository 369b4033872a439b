// `grpo sft`: supervised fine-tuning of a checkpoint (or a fresh built-in model) on the bundled data.
import { GrpoError } from '../../errors.js';
import { resolveConfig } from '../../trainer/recipes.js';
import { arithmeticExamples, recommendExamples, SFT_DEFAULTS, sftOptions } from '../../trainer/sft.js';
import { moviesData } from '../../trainer/tasks.js';
import { DEVICE_FLAG, deviceFlag, intFlag } from '../args.js';
import { required, type Command } from '../command.js';
import { demoPolicy, demoTokenizer, loadPolicy } from '../models.js';
import { sftWithProgress } from '../run-training.js';

const DATASETS = ['movies', 'arithmetic'] as const;

export const sftCommand: Command = {
  name: 'sft',
  summary: 'supervised fine-tuning on the bundled movie lists and arithmetic solutions',
  usage: 'grpo sft --out <dir> [--policy <checkpoint> | --model demo|quick] [--data movies,arithmetic] [--steps <n>] [--device cpu|cuda|auto] [--prompt.<option> <value>] ...',
  description: 'Trains on (prompt, target) pairs in the exact prompt formats of the recipes: every (request, respondent) row of the\n' +
    'movies-multi train split as a numbered "Title (Year)" list, and worked arithmetic solutions packed 1 and 3 per prompt.\n' +
    'Without --policy a fresh built-in model is created with a byte-level BPE trained on the same corpora. Writes <out>/policy.\n' +
    'A checkpoint whose tokenizer has a chat template gets each prompt through it, as grpo train prompts it (the prompt options).',
  flags: [
    { name: 'out', help: 'output folder (writes <out>/policy and <out>/sft.json)' },
    { name: 'policy', help: 'checkpoint to start from (default: a fresh built-in model)' },
    { name: 'model', help: 'size of the fresh model: demo (default) or quick' },
    { name: 'vocab', help: 'BPE vocabulary of the fresh model (default 1024)' },
    { name: 'data', help: 'comma-separated: movies, arithmetic (default both)' },
    { name: 'ranks', help: 'films per target list (default 5)' },
    { name: 'steps', help: `optimizer steps (default ${SFT_DEFAULTS.steps})` },
    { name: 'batch-size', help: `sequences per step (default ${SFT_DEFAULTS.batchSize})` },
    { name: 'lr', help: `peak learning rate (default ${SFT_DEFAULTS.learningRate})` },
    { name: 'seed', help: 'seed of the batch order and of a fresh model (default 0)' },
    DEVICE_FLAG,
  ],
  acceptsConfig: ['prompt'],
  configHelp: 'The prompt options are flags as on grpo train: --prompt.system "You recommend films.", --prompt.chatTemplate false,\n--prompt.thinking off (docs/trainer.md); use the same values on grpo train.',
  async run(args, reporter) {
    const out = required(args, 'out', 'folder');
    const sets = (args.flags.get('data') ?? DATASETS.join(',')).split(',');
    for (const d of sets) if (!(DATASETS as readonly string[]).includes(d)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `--data: unknown dataset "${d}"; expected ${DATASETS.join(', ')}`);
    const ranks = intFlag(args, 'ranks', 5);
    const seed = intFlag(args, 'seed', 0);
    const data = resolveConfig({ recipe: 'ccr' }).data;
    const model = args.flags.get('model') ?? 'demo';
    if (model !== 'demo' && model !== 'quick') throw new GrpoError('GRPO_INVALID_ARGUMENT', `--model: expected demo or quick but received "${model}"`);
    const lr = Number(args.flags.get('lr') ?? SFT_DEFAULTS.learningRate);
    if (!(lr > 0)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `--lr: expected a positive number but received "${args.flags.get('lr')}"`);
    const options = sftOptions({ ...args.overrides, steps: intFlag(args, 'steps', SFT_DEFAULTS.steps), batchSize: intFlag(args, 'batch-size', SFT_DEFAULTS.batchSize), learningRate: lr, seed });
    const from = args.flags.get('policy');
    const device = deviceFlag(args);
    const policy = from ? await loadPolicy(from, device) : await demoPolicy(model, demoTokenizer(intFlag(args, 'vocab', 1024), data, ranks), seed, device);
    const examples = [
      ...(sets.includes('movies') ? recommendExamples(moviesData(''), ranks) : []),
      ...(sets.includes('arithmetic') ? arithmeticExamples(data, [1, 3]) : []),
    ];
    await sftWithProgress(reporter, `SFT (${examples.length} examples)`, policy, examples, options, out);
  },
};
