// Progress output of the command line. Not a TTY (a log): a spawned tiny run prints one line per phase
// and each validation's result. A TTY: a fake terminal that applies \r, "erase to end of line" and \n
// shows one live bar (rate, ETA, moving clock) below the printed lines, and no bar left behind when done.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clock, eta, rate } from '../lib/cli/progress-format.js';
import { createReporter, type TextStream } from '../lib/cli/progress.js';
import { tinyMoviesDir, tinyPolicy } from './helpers/trainer.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** A terminal of `columns` that both streams write to: the lines it shows, cursor on the last. */
function fakeTerminal(columns = 120) {
  const lines = [''];
  let column = 0;
  let writes = 0;
  const put = (text: string) => {
    writes++;
    for (const token of text.match(/\x1b\[K|\r|\n|[^\r\n\x1b]+/g) ?? []) {
      const row = lines.length - 1;
      if (token === '\r') column = 0;
      else if (token === '\n') (lines.push(''), (column = 0));
      else if (token === '\x1b[K') lines[row] = lines[row].slice(0, column);
      else {
        lines[row] = lines[row].slice(0, column) + token + lines[row].slice(column + token.length);
        column += token.length;
      }
    }
  };
  const stream = (isTTY: boolean): TextStream => ({ isTTY, columns, write: put });
  return { err: stream(true), out: stream(false), screen: () => lines.join('\n'), writes: () => writes };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('progress on a TTY', () => {
  it('one live bar with rate and ETA; lines go above it; a finished phase leaves its summary, no frozen bar', async () => {
    const term = fakeTerminal();
    const reporter = createReporter({ stream: term.err, out: term.out, refreshMs: 10 });
    const phase = reporter.phase('train remark', 6);
    reporter.note('train remark: policy on cpu');
    phase.update(1, 'reward 0.100');
    await sleep(30);
    phase.update(2, 'reward 0.200');
    reporter.note('train remark: validation at step 2: relevantRecall 0.250 (best so far)');
    expect(term.screen().split('\n')).toEqual([
      'train remark: policy on cpu',
      'train remark: validation at step 2: relevantRecall 0.250 (best so far)',
      expect.stringMatching(/^train remark \[█{7}░{13}\] 33% 2\/6 steps \| (\d+\.\d steps\/s|\d+\.\d s\/step) \| 0:00, ETA 0:00 \| reward 0\.200$/),
    ]);
    const before = term.writes();
    await sleep(60);
    expect(term.writes()).toBeGreaterThan(before); // redrawn without an update: the clock moves
    phase.update(6);
    phase.done('maxSteps after 6 steps');
    reporter.line('{ "test": {} }');
    const screen = term.screen().split('\n');
    expect(screen.slice(2)).toEqual([expect.stringMatching(/^train remark: 6\/6 steps in \d+\.\d s \(.*\) — maxSteps after 6 steps$/), '{ "test": {} }', '']);
    expect(term.screen()).not.toMatch(/\[[█░]+\]/);
  });

  it('a resumed phase counts its rate and ETA from where it resumed; lines are cut to the terminal width', () => {
    const resumed = { name: 'resume remark', value: 42, total: 100, start: 40, unit: 'steps', elapsedMs: 4000, status: '' };
    expect([rate(resumed), eta(resumed)]).toEqual(['2.0 s/step', '1:56']); // 2 steps in 4 s; 58 left
    expect(rate({ ...resumed, elapsedMs: 500 })).toBe('4.0 steps/s');
    expect(clock(3725)).toBe('1:02:05');
    const term = fakeTerminal(40);
    const phase = createReporter({ stream: term.err, out: term.out }).phase('resume remark', 100);
    phase.startAt(40);
    expect(term.screen()).toBe('resume remark [████████░░░░░░░░░░░░] 4…') // 39 columns: never wraps;
    phase.done();
  });

  it('--quiet: results only', () => {
    const term = fakeTerminal();
    const reporter = createReporter({ stream: term.err, out: term.out, quiet: true });
    reporter.phase('sft', 3).done('final loss 1');
    reporter.note('validation');
    reporter.line('result');
    expect(term.screen()).toBe('result\n');
  });
});

describe('progress in a log (not a TTY)', () => {
  it('a tiny run: one line per phase, the device, each validation and the test result', async () => {
    expect(existsSync(join(root, 'dist', 'cli', 'main.js')), 'dist/ is missing: run npm run build:ts').toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'grpo-progress-'));
    const policy = await tinyPolicy();
    await policy.save(join(dir, 'policy'));
    policy.dispose();
    const flags = ['--recipe', 'remark', '--steps', '2', '--groups', '1', '--candidates', '2', '--rewards.ranks', '1', '--rewards.catalog', 'none',
      '--validation.every', '1', '--testPrompts', '1', '--generation.maxNewTokens', '8', '--data.moviesDir', tinyMoviesDir([1, 2], 1)];
    const run = spawnSync(process.execPath, [join(root, 'bin', 'grpo.js'), 'train', '--policy', join(dir, 'policy'), '--out', join(dir, 'run'), ...flags],
      { encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      'train remark: policy on cpu',
      expect.stringMatching(/^train remark: validation at step 1: relevantRecall \d\.\d{3}( \(best so far\))?$/),
      expect.stringMatching(/^train remark: validation at step 2: relevantRecall \d\.\d{3}( \(best so far\))?$/),
      expect.stringMatching(/^train remark: test of the step-[12] checkpoint: relevantRecall \d\.\d{3}$/),
      expect.stringMatching(/^train remark: 2\/2 steps in \d+\.\d s \((\d+\.\d steps\/s|\d+\.\d s\/step)\) — maxSteps after 2 steps; best relevantRecall \d\.\d{3} at step [12]$/),
    ]);
    expect(run.stderr).not.toMatch(/[\r\x1b]/);
    expect(run.stdout).toContain('"test"');
  }, 90_000);
});
