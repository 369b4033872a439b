// The `grpo` command in-process: --help everywhere, and user mistakes as one clear line with exit code 2
// (never a stack trace).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { COMMANDS, main } from '../lib/cli/main.js';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
  return { out: () => out.join(''), err: () => err.join('') };
}

afterEach(() => vi.restoreAllMocks());

describe('grpo --help', () => {
  it('lists every subcommand; each one has its own help', async () => {
    const io = capture();
    expect(await main(['--help'])).toBe(0);
    for (const name of ['sft', 'train', 'eval', 'compare', 'report', 'data', 'bench', 'demo']) expect(io.out()).toContain(`  ${name} `);
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
    [['eval', '--split', 'train'], /--split: expected test or validation/],
    [['compare', join(dir, 'a')], /compare needs at least two run directories/],
    [['report', join(dir, 'nothing')], /Cannot read .*config.json: ENOENT/],
    [['data', 'films'], /grpo data: expected one of movies-multi, arithmetic/],
    [['train', '--resume', join(dir, 'nothing')], /Cannot read .*config.json/],
  ];
  it.each(cases)('grpo %j → one line, exit code 2', async (argv, message) => {
    const io = capture();
    expect(await main(argv)).toBe(2);
    expect(io.err()).toMatch(message);
    expect(io.err().trim().split('\n')).toHaveLength(1);
    expect(io.err()).not.toMatch(/\n\s+at /);
  });
});
