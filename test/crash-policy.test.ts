// Crash hunting, the built-in policy: dispose() while each async method is queued and while it runs in native code
// (the model used to be freed under the worker: SIGSEGV), dispose() between a step's stages, every method after
// dispose(), the sync methods while a step runs, and generate/score with their typed-array prompts transferred. The process must survive; a running native call completes
// on the model it holds, everything else is a GrpoError. Checks: policyCases in test/helpers/crash-child.mjs.
import { expect, it } from 'vitest';
import { runCrashChild } from './helpers/crash-run.js';

it('dispose() mid-call never frees a model a worker uses; later calls are typed errors', async () => {
  const run = await runCrashChild(['policy']);
  expect(run.signal, run.output).toBeNull();
  expect(run.code, run.output).toBe(0);
  expect(run.output).not.toContain('FAIL');
  expect(run.output.match(/^ok /gm)?.length).toBe(40);
});
