// `grpo bench`: the kernel benchmarks (bench/*.bench.js of a source checkout), each in its own process.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GrpoError } from '../../errors.js';
import type { Command } from '../command.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

export const benchCommand: Command = {
  name: 'bench',
  summary: 'run the kernel benchmarks (from a source checkout)',
  usage: 'grpo bench [<suite prefix> ...]',
  description: 'Runs bench/run.js: every bench/*.bench.js (or those whose names start with a given prefix), each checking its fast\n' +
    'result against the reference before timing it and printing time, GB/s and the ratio to the roofs measured in the same run.',
  flags: [],
  acceptsConfig: false,
  async run(args) {
    const runner = join(root, 'bench', 'run.js');
    if (!existsSync(runner)) throw new GrpoError('GRPO_UNSUPPORTED', `No benchmarks at ${runner}: they ship with the source repository, not the npm package`);
    const { status } = spawnSync(process.execPath, [runner, ...args.positionals], { stdio: 'inherit', cwd: root });
    if (status !== 0) throw new GrpoError('GRPO_INTERNAL', `bench/run.js exited with status ${status}`);
  },
};
