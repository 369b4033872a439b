// Crash hunting, threads: every async kernel called twice at once on the main thread while two worker_threads do
// the same (each result bitwise its thread's sync result), then a worker terminated while its calls are in
// flight (settling their promises in the dying environment used to abort the process). Checks: threads in
// test/helpers/crash-child.mjs.
import { expect, it } from 'vitest';
import { runCrashChild } from './helpers/crash-run.js';

it('concurrent calls from the main thread and worker_threads, and a worker terminated mid-call', async () => {
  const run = await runCrashChild(['threads']);
  expect(run.signal, run.output).toBeNull();
  expect(run.code, run.output).toBe(0);
  expect(run.output.match(/^ok /gm)?.length).toBe(3);
});
