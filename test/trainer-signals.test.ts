// `grpo train` stopped by a signal, as a user's shell sees it: the CLI (dist/, built by `npm test`'s
// pretest) is spawned on a tiny run and signalled once its steps run. It saves a checkpoint, prints the
// resume command and exits with 128 + the signal's number (SIGINT 130, SIGTERM 143); the resume command
// then finishes the run, with the options that may change on resume applied.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempRunRoot, tinyMoviesDir, tinyPolicy } from './helpers/trainer.js';

const grpo = fileURLToPath(new URL('../bin/grpo.js', import.meta.url));
const root = tempRunRoot();
const policyDir = join(root, 'policy');
const moviesDir = tinyMoviesDir([1, 2, 1], 2);

/** Options of a run too long to finish before the signal: tiny batches, no validation. */
const runFlags = [
  '--recipe', 'remark', '--policy', policyDir, '--steps', '100000', '--groups', '2', '--candidates', '2',
  '--checkpointEvery', '100000', '--testPrompts', '2', '--generation.maxNewTokens', '8', '--validation.every', '0',
  '--rewards.ranks', '3', '--rewards.catalog', 'benchmark', '--data.moviesDir', moviesDir,
];

/** Spawns `grpo train`, sends `signal` once the run has started stepping, resolves to its exit and output. */
function trainUntil(signal: NodeJS.Signals, out: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [grpo, 'train', ...runFlags, '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  // "policy on cpu" (on either stream) comes once the signal handlers are installed and the loop starts
  const signalOnceStarted = () => {
    if (/policy on /.test(stdout + stderr) && !child.killed) child.kill(signal);
  };
  child.stdout.on('data', (chunk: Buffer) => ((stdout += chunk), signalOnceStarted()));
  child.stderr.on('data', (chunk: Buffer) => ((stderr += chunk), signalOnceStarted()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

beforeAll(async () => {
  const policy = await tinyPolicy();
  await policy.save(policyDir);
  policy.dispose();
});

describe('grpo train stopped by a signal', () => {
  it.each([['SIGINT', 130], ['SIGTERM', 143]] as const)('%s: saves, prints the resume command, exits with %i', async (signal, status) => {
    const out = join(root, signal);
    const run = await trainUntil(signal, out);
    expect(run.stderr).toContain(`stopped by ${signal} after saving (exit status ${status})`);
    expect(run.code).toBe(status);
    expect(run.stdout).toContain(`continue with  grpo train --resume ${out}`);
    const latest = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8'));
    expect(latest.step).toBeGreaterThanOrEqual(1);
    const state = JSON.parse(readFileSync(join(out, latest.checkpoint, 'trainer-state.json'), 'utf8'));
    expect(state).toMatchObject({ step: latest.step, stopReason: 'interrupted' });
  });

  it('the printed resume command finishes the run with the options that may change applied', () => {
    const out = join(root, 'SIGINT');
    const done = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')).step;
    const argv = [grpo, 'train', '--resume', out, '--steps', String(done + 1), '--testPrompts', '1'];
    const run = spawnSync(process.execPath, argv, { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).not.toMatch(/grpo train:/);
    expect(run.status).toBe(0);
    expect(JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')).step).toBe(done + 1);
    expect(JSON.parse(readFileSync(join(out, 'test.json'), 'utf8')).completions).toHaveLength(1);
    expect(existsSync(join(out, 'report', 'report.md'))).toBe(true);
  });
});
