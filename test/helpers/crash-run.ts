// Runs test/helpers/crash-child.mjs in its own process, so that a native crash fails the calling test with the
// signal and the child's output instead of killing the runner. The child imports dist/ (`npm test` builds it first).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const child = join(root, 'test', 'helpers', 'crash-child.mjs');

export interface CrashRun {
  /** exit code, or null when a signal ended the child */
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

export function runCrashChild(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<CrashRun> {
  if (!existsSync(join(root, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build:ts` first');
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--expose-gc', child, ...args], { env: { ...process.env, ...env }, timeout: timeoutMs });
    let output = '';
    proc.stdout.on('data', (chunk) => (output += chunk));
    proc.stderr.on('data', (chunk) => (output += chunk));
    proc.on('error', reject);
    proc.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}
