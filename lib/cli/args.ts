// Command-line arguments: positionals, known flags of a subcommand, and dotted config overrides
// (`--generation.maxNewTokens 96`, `--loss.beta=0`) that the trainer config validates.
import { DEVICES, type Device } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import { setPath } from '../trainer/config.js';

/** A flag a subcommand accepts: boolean switches take no value. */
export interface FlagSpec {
  name: string;
  help: string;
  boolean?: boolean;
}

export interface ParsedArgs {
  positionals: string[];
  /** known flags: name → value ("true" for switches) */
  flags: Map<string, string>;
  /** config overrides from every other `--key value` */
  overrides: Record<string, unknown>;
  help: boolean;
}

/**
 * Parses `argv` (after the subcommand). Flags in `known` are kept as strings; any other `--a.b` flag is
 * a config override when `acceptsConfig` is true or lists `a`, else an error naming the accepted flags.
 */
export function parseArgs(argv: readonly string[], known: readonly FlagSpec[], acceptsConfig: boolean | readonly string[]): ParsedArgs {
  const out: ParsedArgs = { positionals: [], flags: new Map(), overrides: {}, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      out.help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      out.positionals.push(arg);
      continue;
    }
    const [name, inline] = splitFlag(arg.slice(2));
    const spec = known.find((f) => f.name === name);
    if (spec?.boolean) {
      out.flags.set(name, inline ?? 'true');
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Flag --${name} needs a value`);
    if (spec) out.flags.set(name, value);
    else if (acceptsConfig === true || (acceptsConfig !== false && acceptsConfig.includes(name.split('.')[0]))) setPath(out.overrides, name, value);
    else throw new GrpoError('GRPO_INVALID_ARGUMENT', `Unknown flag --${name}; accepted: ${acceptedFlags(known, acceptsConfig) || 'none'}`);
  }
  return out;
}

function acceptedFlags(known: readonly FlagSpec[], acceptsConfig: boolean | readonly string[]): string {
  const options = typeof acceptsConfig === 'boolean' ? [] : acceptsConfig.map((name) => `--${name}.<option>`);
  return [...known.map((f) => `--${f.name}`), ...options].join(', ');
}

function splitFlag(text: string): [string, string | undefined] {
  const at = text.indexOf('=');
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

/** A flag's integer value, or `fallback` when absent. */
export function intFlag(args: ParsedArgs, name: string, fallback: number): number {
  const text = args.flags.get(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Flag --${name}: expected a non-negative integer but received "${text}"`);
  return value;
}

/** The `--device` flag every model-running command accepts (help text and check). */
export const DEVICE_FLAG: FlagSpec = Object.freeze({
  name: 'device',
  help: 'where the built-in model runs: cpu (default), cuda, or auto (cuda when available); the GPU path is unverified',
});

/** The --device value, or undefined when absent (the config's device then applies). */
export function deviceFlag(args: ParsedArgs): Device | undefined {
  const text = args.flags.get(DEVICE_FLAG.name);
  if (text === undefined || (DEVICES as readonly string[]).includes(text)) return text as Device | undefined;
  throw new GrpoError('GRPO_INVALID_ARGUMENT', `Flag --device: expected one of ${DEVICES.join(', ')} but received "${text}"`);
}

/** Help text of a subcommand: usage, description, flags, and the note on option flags (true: the trainer's). */
export function helpText(usage: string, description: string, flags: readonly FlagSpec[], configNote: boolean | string = false): string {
  const width = Math.max(0, ...flags.map((f) => f.name.length + (f.boolean ? 0 : 8)));
  const lines = flags.map((f) => `  --${(f.name + (f.boolean ? '' : ' <value>')).padEnd(width)}  ${f.help}`);
  const config = typeof configNote === 'string' ? ['', configNote] : configNote ? ['', 'Any trainer option can be set as a flag: --steps 100, --generation.maxNewTokens 96, --loss.beta 0', '(see docs/trainer.md; flags override --config).'] : [];
  return [`Usage: ${usage}`, '', description, '', 'Options:', ...lines, '  --help'.padEnd(width + 4) + '  show this help', ...config].join('\n');
}
