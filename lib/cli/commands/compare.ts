// `grpo compare` and `grpo report`: reports from run directories (markdown with intervals + SVG figures).
import { join } from 'node:path';
import { GrpoError } from '../../errors.js';
import { compareRuns, writeRunReport } from '../../trainer/run-report.js';
import { RunDir } from '../../trainer/run-dir.js';
import { required, type Command } from '../command.js';

export const compareCommand: Command = {
  name: 'compare',
  summary: 'compare two or more runs: paired intervals on the same test prompts, steps-to-target, figures',
  usage: 'grpo compare <baseline run> <run> [<run> ...] --out <dir> [--names a,b,...] [--title <text>]',
  description: 'The first run is the baseline. Writes <out>/report.md and its SVG figures: test metrics with 95% bootstrap intervals,\n' +
    'paired differences against the baseline, steps-to-target on the validation curves, training traces.',
  flags: [
    { name: 'out', help: 'output folder' },
    { name: 'names', help: 'comma-separated run names (default: folder names)' },
    { name: 'title', help: 'report title' },
  ],
  acceptsConfig: false,
  async run(args, reporter) {
    if (args.positionals.length < 2) throw new GrpoError('GRPO_INVALID_ARGUMENT', `compare needs at least two run directories but received ${args.positionals.length}`);
    const names = args.flags.get('names')?.split(',');
    if (names && names.length !== args.positionals.length) throw new GrpoError('GRPO_INVALID_ARGUMENT', `--names lists ${names.length} names for ${args.positionals.length} runs`);
    const written = await compareRuns(args.positionals, required(args, 'out', 'folder'), { names, title: args.flags.get('title') });
    reporter.line(`Wrote ${written.join(', ')}`);
  },
};

export const reportCommand: Command = {
  name: 'report',
  summary: 'write the report of one run (report/report.md and figures in the run directory)',
  usage: 'grpo report <run directory>',
  description: 'Re-renders <run>/report/ from metrics.jsonl, validation.jsonl and test.json (written automatically at the end of grpo train).',
  flags: [],
  acceptsConfig: false,
  async run(args, reporter) {
    if (args.positionals.length !== 1) throw new GrpoError('GRPO_INVALID_ARGUMENT', `report needs one run directory but received ${args.positionals.length}`);
    const written = await writeRunReport(new RunDir(args.positionals[0]));
    reporter.line(`Wrote ${written.join(', ')} (${join(args.positionals[0], 'report')})`);
  },
};
