// `grpo demo` (= `npm start`): both embedded studies at demo scale, one seed — ReMaRk vs Rank-GRPO on movies-multi
// (SFT, mechanism diagnostics, four arms, test comparisons with intervals) and CCR vs single-problem GRPO —
// printing the summary and writing summary.json, summary.md and the reports with figures.
import { TRAINER_DEFAULTS, type ConfigInput } from '../../trainer/config.js';
import { DEVICE_FLAG, deviceFlag, intFlag } from '../args.js';
import type { Command } from '../command.js';
import { runStudies, studiesFlag } from '../studies.js';

export const demoCommand: Command = {
  name: 'demo',
  summary: 'the main job end to end at laptop scale: ReMaRk vs Rank-GRPO and CCR vs GRPO, with intervals and reports',
  usage: 'grpo demo [--out <dir>] [--quick] [--seed <n>] [--studies recommend,ccr] [--device cpu|cuda|auto] [--<trainer option> <value> ...]',
  description: 'Runs both embedded studies at demo scale with one seed (about 10 minutes on 2 cores; --quick: test-sized, under\n' +
    '2 minutes): the recommendation study (SFT of the built-in model, zero-reward groups and respondent variance share on the\n' +
    'same rollouts, then rank-grpo, rank-grpo-requests, remark and remark-mean from that checkpoint, tested with request-bootstrap\n' +
    'intervals and paired differences) and the CCR study. Writes <out>/summary.json (docs/summary-json.md), <out>/summary.md and\n' +
    '<out>/recommend/report/, <out>/ccr/report/. Trainer options given by flag apply to every arm, e.g. --steps 200. The full\n' +
    'studies with several seeds: grpo reproduce.',
  flags: [
    { name: 'out', help: 'output folder; its previous study output is replaced (default grpo-demo)' },
    { name: 'quick', help: 'test-sized settings, under 2 minutes', boolean: true },
    { name: 'seed', help: 'the RL seed of every arm (default 0)' },
    { name: 'studies', help: 'comma-separated studies to run now (recommend, ccr; default both); a study left out reuses its saved result in --out' },
    DEVICE_FLAG,
  ],
  acceptsConfig: true,
  async run(args, reporter) {
    const quick = args.flags.get('quick') === 'true';
    const device = deviceFlag(args) ?? TRAINER_DEFAULTS.device;
    await runStudies(reporter, {
      out: args.flags.get('out') ?? 'grpo-demo', scale: quick ? 'quick' : 'demo', seeds: [intFlag(args, 'seed', 0)], device,
      overrides: { ...args.overrides, device } as ConfigInput, studies: studiesFlag(args), command: `grpo demo${quick ? ' --quick' : ''}`,
    });
  },
};
