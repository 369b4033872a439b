// The `grpo` command in-process: --help everywhere, and user mistakes as one clear line with exit code 2
// (never a stack trace), among them flags that `--resume` cannot apply.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { capture } from './helpers/capture.js';
import { COMMANDS, main } from '../lib/cli/main.js';
import { resolveConfig } from '../lib/trainer/recipes.js';


afterEach(() => vi.restoreAllMocks());

describe('grpo --help', () => {
  it('lists every subcommand; each one has its own help', async () => {
    const io = capture();
    expect(await main(['--help'])).toBe(0);
    for (const name of ['sft', 'train', 'eval', 'compare', 'report', 'data', 'bench', 'demo', 'reproduce']) expect(io.out()).toContain(`  ${name} `);
    for (const c of COMMANDS) {
      expect(await main([c.name, '--help'])).toBe(0);
      expect(io.out()).toContain(`Usage: ${c.usage.split(' ').slice(0, 2).join(' ')}`);
    }
  });
});

describe('user mistakes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'grpo-cli-'));
  const badJson = join(dir, 'bad.json');
  writeFileSync(badJson, '{ "steps": 3, }');
  const typo = join(dir, 'typo.json');
  writeFileSync(typo, JSON.stringify({ recipe: 'ccr', rewards: { problem: 3 } }));
  // a run directory as `grpo train` leaves it (its config.json is all that --resume reads before refusing flags)
  const run = join(dir, 'run');
  mkdirSync(run);
  writeFileSync(join(run, 'config.json'), JSON.stringify(resolveConfig({ recipe: 'remark' })));
  const cases: [string[], RegExp][] = [
    [['fly'], /Unknown command "fly"; expected one of sft, train/],
    [['train', '--policy', join(dir, 'none'), '--out', join(dir, 'r')], /No checkpoint at .*none \(config.json is missing\)/],
    [['train', '--config', join(dir, 'missing.json')], /Cannot read the config file .*missing.json: ENOENT/],
    [['train', '--config', badJson], /bad.json is not valid JSON/],
    [['train', '--config', typo], /Option "problem" of config "rewards" is unknown; did you mean "problems"\?/],
    [['train', '--recipe', 'remark', '--groups', 'many'], /Expected an integer for config "groups" but received "many"/],
    [['train', '--steps'], /Flag --steps needs a value/],
    [['sft', '--out', dir, '--bogus', '1'], /Unknown flag --bogus; accepted: --out/],
    [['sft', '--out', dir, '--data', 'books'], /--data: unknown dataset "books"/],
    // grpo sft takes the prompt options of the trainer config as flags, and no other trainer option
    [['sft', '--out', dir, '--groups', '3'], /Unknown flag --groups; accepted: --out, .*--prompt.<option>/],
    [['sft', '--out', dir, '--prompt.sytem', 'x'], /Option "sytem" of sft options prompt is unknown; did you mean "system"\?/],
    [['sft', '--out', dir, '--prompt.thinking', 'maybe'], /Expected prompt.thinking to be one of "template", "on", "off" but received "maybe"/],
    [['eval', '--split', 'train'], /--split: expected test or validation/],
    [['compare', join(dir, 'a')], /compare needs at least two run directories/],
    [['report', join(dir, 'nothing')], /Cannot read .*config.json: ENOENT/],
    [['data', 'films'], /grpo data: expected one of movies-multi, arithmetic/],
    [['train', '--resume', join(dir, 'nothing')], /Cannot read .*config.json/],
    // on resume, options that would change what the remaining steps compute are refused by name
    [['train', '--resume', run, '--learningRate', '0.1'], /"learningRate" cannot change on resume \(these can: steps, device, checkpointEvery/],
    [['train', '--resume', run, '--generation.maxNewTokens', '9', '--seed', '3'], /"generation.maxNewTokens", "seed" cannot change on resume/],
    [['train', '--resume', run, '--recipe', 'ccr'], /"recipe" cannot change on resume/],
    [['train', '--resume', run, '--policy', dir, '--out', dir], /--resume continues .*run from its own checkpoint and config.json; remove --policy, --out/],
    // and an unknown one (a typo) is refused as in a first run
    [['train', '--resume', run, '--learningrate', '0.1'], /Option "learningrate" of the config is unknown; did you mean "learningRate"\?/],
  ];
  it.each(cases)('grpo %j → one line, exit code 2', async (argv, message) => {
    const io = capture();
    expect(await main(argv)).toBe(2);
    expect(io.err()).toMatch(message);
    expect(io.err().trim().split('\n')).toHaveLength(1);
    expect(io.err()).not.toMatch(/\n\s+at /);
  });
});
