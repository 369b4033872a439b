// The `grpo` command: subcommands, --help everywhere, and errors as one clear line (never a stack
// trace for a user's mistake; an unexpected failure prints its stack and asks for a report). A run stopped
// by SIGINT/SIGTERM exits with that signal's status (130 / 143) once it has saved.
import { GrpoError } from '../errors.js';
import { StoppedBySignal } from '../trainer/signals.js';
import { helpText, parseArgs } from './args.js';
import type { Command } from './command.js';
import { benchCommand } from './commands/bench.js';
import { compareCommand, reportCommand } from './commands/compare.js';
import { dataCommand } from './commands/data.js';
import { demoCommand } from './commands/demo.js';
import { evalCommand } from './commands/eval.js';
import { exportCommand } from './commands/export.js';
import { mergeCommand } from './commands/merge.js';
import { reproduceCommand } from './commands/reproduce.js';
import { sftCommand } from './commands/sft.js';
import { trainCommand } from './commands/train.js';
import { createReporter } from './progress.js';

export const COMMANDS: readonly Command[] = [sftCommand, trainCommand, evalCommand, compareCommand, reportCommand, dataCommand, benchCommand, demoCommand, reproduceCommand, mergeCommand, exportCommand];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: grpo <command> [options]      (grpo <command> --help for its options)',
    '',
    'GRPO-family RL for language models with native kernels: SFT, the rank-grpo / rank-grpo-requests / remark / remark-mean / ccr / grpo',
    'recipes, evaluation with bootstrap intervals, reports. Start with: grpo demo',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Every command: --help for its options; --quiet for results only (no progress output).',
  ].join('\n');
}

/** User mistakes: typed errors, and the file-system errors of paths they gave. */
function isUserError(error: unknown): error is Error {
  const code = (error as NodeJS.ErrnoException)?.code;
  return error instanceof GrpoError ? error.code !== 'GRPO_INTERNAL' : typeof code === 'string' && /^E[A-Z]+$/.test(code);
}

/** Runs `grpo <argv>`; resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  const reporter = createReporter({ quiet: rest.includes('--quiet') });
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    reporter.line(overview());
    return name === undefined ? 1 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  try {
    if (!command) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Unknown command "${name}"; expected one of ${COMMANDS.map((c) => c.name).join(', ')}`);
    const args = parseArgs(rest.filter((a) => a !== '--quiet'), command.flags, command.acceptsConfig);
    if (args.help) {
      reporter.line(helpText(command.usage, command.description, command.flags, command.configHelp ?? command.acceptsConfig === true));
      return 0;
    }
    await command.run(args, reporter);
    return 0;
  } catch (error) {
    if (error instanceof StoppedBySignal) {
      process.stderr.write(`grpo ${name}: ${error.message}\n`);
      return error.exitCode;
    }
    if (isUserError(error)) {
      process.stderr.write(`grpo ${name}: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`grpo ${name}: unexpected failure (please report it):\n${(error as Error)?.stack ?? String(error)}\n`);
    return 1;
  }
}
