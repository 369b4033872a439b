// `grpo reproduce`: the full embedded studies (≥ 3 seeds; K 5 for the recommendation study, as its starting policy writes lists), at most 90 minutes on
// 2 cores at the default flags; writes the same summary.json / summary.md / reports as `grpo demo`.
import { TRAINER_DEFAULTS, type ConfigInput } from '../../trainer/config.js';
import { DEVICE_FLAG, deviceFlag } from '../args.js';
import type { Command } from '../command.js';
import { runStudies, seedsFlag, studiesFlag } from '../studies.js';

/** The seeds of the full run: at least three, as the issue asks. */
export const REPRODUCE_SEEDS = Object.freeze([0, 1, 2]);

export const reproduceCommand: Command = {
  name: 'reproduce',
  summary: 'the full studies (3 seeds, ≤ 90 min on 2 cores): per-seed and pooled results, report.md with SVG figures',
  usage: 'grpo reproduce [--out <dir>] [--seeds 0,1,2] [--steps <n>] [--quick] [--studies recommend,ccr] [--device cpu|cuda|auto] [--<trainer option> <value> ...]',
  description: 'Runs both embedded studies at full scale for every seed: the recommendation study (SFT, diagnostics on the same\n' +
    'rollouts, rank-grpo with group and with batch std — the better by validation is the baseline —, rank-grpo-requests, remark,\n' +
    'remark-mean; K 5, selection on validation rowRecall; per-seed and pooled test results with 95% request-bootstrap intervals)\n' +
    'and the CCR study. Scale by flag: --seeds (comma-separated), --steps, --groups, --candidates, --rewards.ranks or any trainer\n' +
    'option (applied to every arm of both studies). Writes <out>/summary.json, <out>/summary.md and the reports.',
  flags: [
    { name: 'out', help: 'output folder; its previous study output is replaced (default grpo-reproduce)' },
    { name: 'seeds', help: 'comma-separated RL seeds, every arm once per seed (default 0,1,2)' },
    { name: 'quick', help: 'test-sized settings (the pipeline of the full run in a few minutes)', boolean: true },
    { name: 'studies', help: 'comma-separated studies to run now (recommend, ccr; default both); a study left out reuses its saved result in --out' },
    DEVICE_FLAG,
  ],
  acceptsConfig: true,
  async run(args, reporter) {
    const quick = args.flags.get('quick') === 'true';
    const device = deviceFlag(args) ?? TRAINER_DEFAULTS.device;
    const seeds = seedsFlag(args, REPRODUCE_SEEDS);
    await runStudies(reporter, {
      out: args.flags.get('out') ?? 'grpo-reproduce', scale: quick ? 'quick' : 'full', seeds, device,
      overrides: { ...args.overrides, device } as ConfigInput, studies: studiesFlag(args), command: `grpo reproduce${quick ? ' --quick' : ''} --seeds ${seeds.join(',')}`,
    });
  },
};
