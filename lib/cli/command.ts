// What every subcommand of `grpo` is: a name, a one-line summary, its flags and a run function.
import { readFile } from 'node:fs/promises';
import { GrpoError } from '../errors.js';
import type { ConfigInput } from '../trainer/config.js';
import type { FlagSpec, ParsedArgs } from './args.js';
import type { Reporter } from './progress.js';

export interface Command {
  name: string;
  summary: string;
  usage: string;
  description: string;
  flags: readonly FlagSpec[];
  /** Whether unknown `--a.b value` flags are trainer config overrides: all of them, or those under the listed names. */
  acceptsConfig: boolean | readonly string[];
  /** The help note on those flags when they are not the trainer's options. */
  configHelp?: string;
  run(args: ParsedArgs, reporter: Reporter): Promise<void>;
}

/** Reads a JSON config file (a partial trainer config) with errors that name the file. */
export async function readConfigFile(path: string | undefined): Promise<ConfigInput> {
  if (path === undefined) return {};
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Cannot read the config file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text) as ConfigInput;
  } catch (error) {
    throw new GrpoError('GRPO_DATA_FORMAT', `The config file ${path} is not valid JSON: ${(error as Error).message}`);
  }
}

/** The flag's value, or a clear error saying it is required. */
export function required(args: ParsedArgs, name: string, what: string): string {
  const value = args.flags.get(name);
  if (value === undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Missing --${name} <${what}>`);
  return value;
}
